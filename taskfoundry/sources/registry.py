"""What the registry providers share: a downloaded release archive becomes a pinned checkout."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.sources.checkout import Checkout, Upstream, slug
from taskfoundry.sources.fetch import download, unpack
from taskfoundry.sources.gitrepo import mkdirs, snapshot_commit


class DebianConfig(BaseModel):
    """Where Debian source packages are looked up (`apt-get source`, private apt state)."""

    model_config = {"extra": "forbid"}

    mirror: str = Field("http://deb.debian.org/debian", description="Debian archive URL")
    suite: str = Field("trixie", description="suite whose Sources index is searched")
    fallback_suites: list[str] = Field(
        default_factory=lambda: ["bookworm", "sid"],
        description="suites searched in turn when `suite`'s index names a version its pool no "
        "longer serves (a 404) or lists none; the version built instead is logged and is the "
        "task's upstream version. []: fail at once",
    )
    components: list[str] = Field(default_factory=lambda: ["main"])
    keyring: Path = Field(
        Path("/usr/share/keyrings/debian-archive-keyring.gpg"),
        description="keyring that signs the suite's Release file",
    )
    max_age_hours: float = Field(24.0, description="refresh the Sources index after this long")
    trusted: bool = Field(False, description="accept an unsigned archive (a local mirror or a test)")


class CratesConfig(BaseModel):
    """The crate registry, read the way cargo reads it (sparse index + its `dl` template)."""

    model_config = {"extra": "forbid"}

    index: str = Field("https://index.crates.io", description="sparse index URL")
    max_rust_version: str | None = Field(
        "1.96",
        description="newest rustc the build image has: a `crate:NAME` with no version "
        "picks the newest release whose rust-version is not above it",
    )


class PyPIConfig(BaseModel):
    """The Python package index (its JSON API)."""

    model_config = {"extra": "forbid"}

    json_api: str = Field("https://pypi.org/pypi", description="base of /<name>/json")


class SourceConfig(BaseModel):
    """Settings of the registry providers."""

    model_config = {"extra": "forbid"}

    debian: DebianConfig = Field(default_factory=DebianConfig)
    crates: CratesConfig = Field(default_factory=CratesConfig)
    pypi: PyPIConfig = Field(default_factory=PyPIConfig)
    cache_dir: Path | None = Field(None, description="downloads and apt state; None: <workdir>/cache")

    def cache(self, workdir: Path) -> Path:
        return mkdirs(self.cache_dir or workdir / "cache")


def checkout_release(
    up: Upstream,
    archive_name: str,
    source: str,
    workdir: Path,
    cache: Path,
    prepare: Callable[[Path], str] | None = None,
) -> Checkout:
    """Download `up`'s archive (digest checked), unpack it and commit it deterministically.

    The task id is `<registry prefix>__<name>.<sha7>`; the commit message names the
    release and the archive digest, so one release always gives one commit. `prepare`
    changes the unpacked tree before the commit (a Debian source's patches) and returns
    what it did, for the message.
    """
    owner = source.split(":", 1)[0]
    archive = download(up.url, cache / "downloads" / f"{up.sha256[:16]}-{archive_name}", up.sha256)
    sources = mkdirs(workdir / "sources")
    tmp = Path(tempfile.mkdtemp(prefix=f".{owner}-", dir=sources))
    try:
        tree = unpack(archive, tmp / "tree")
        message = f"{owner}:{up.name} {up.version}\n\n{archive_name} sha256:{up.sha256}\n"
        if prepare is not None:
            message += prepare(tree)
        commit = snapshot_commit(tree, message)
        final = sources / f"{owner}__{slug(up.name)}.{commit[:12]}"
        if not final.exists():
            tree.rename(final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Checkout(final, owner, slug(up.name), commit, source, up)
