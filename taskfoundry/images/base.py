"""The base image: debootstrap a Debian rootfs and `docker import` it (nothing can be pulled).

The tag is a hash of the recipe, so an existing tag is reused and a changed
recipe makes a new image. The rootfs tarball is cached on disk, so an engine
that starts empty re-imports in seconds instead of bootstrapping again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import docker
from docker.errors import APIError, ImageNotFound
from pydantic import BaseModel, Field

from taskfoundry.errors import ImageError
from taskfoundry.images.build import image_exists

log = logging.getLogger(__name__)

DEFAULT_PACKAGES = [
    "build-essential",
    "cmake",
    "meson",
    "ninja-build",
    "pkg-config",
    "autoconf",
    "automake",
    "libtool",
    "golang-go",
    # trixie's rustc-web (1.96, on LLVM 22) in place of its rustc 1.85: let chains (1.88)
    # stopped debian-lsp, diffutils and protonup-rs; llvm-22's tools read its profiles
    "rustc-web",
    "cargo-web",
    "llvm-22",
    "gcovr",
    "python3",
    "python3-pytest",
    "python3-pytest-xdist",
    "python3-pytest-timeout",
    "python3-venv",
    "python3-coverage",
    "git",
    "tmux",
    "ca-certificates",
    "procps",
    "file",
    "less",
]


class BaseImageConfig(BaseModel):
    """How the base image is made."""

    model_config = {"extra": "forbid"}

    suite: str = Field("trixie", description="Debian suite to bootstrap")
    mirror: str = Field("http://deb.debian.org/debian", description="Debian archive URL")
    packages: list[str] = Field(default_factory=lambda: list(DEFAULT_PACKAGES))
    repository: str = Field("taskfoundry/base", description="image repository name")
    pulled: str | None = Field(
        None, description="use this image (e.g. debian:trixie) instead, when it can be had"
    )
    cache_dir: Path = Field(
        Path.home() / ".cache" / "taskfoundry", description="where rootfs tarballs are kept"
    )
    check_valid_until: bool = Field(
        True,
        description="apt in the image refuses a Release file past its Valid-Until; false for a "
        "snapshot of the archive (sid's Release is valid for a week: a mirror frozen longer "
        "ago fails every package install with 'Release file ... is expired')",
    )

    def recipe_hash(self) -> str:
        recipe: dict[str, object] = {
            "suite": self.suite,
            "packages": sorted(self.packages),
            "pulled": self.pulled,
            "version": 2,
        }
        if not self.check_valid_until:  # the default's tag stays as it was
            recipe["check_valid_until"] = False
        blob = json.dumps(recipe, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]

    @property
    def tag(self) -> str:
        return f"{self.repository}:{self.recipe_hash()}"


# Set in every base image: no toolchain download, deterministic text, a sane PATH.
_CHANGES = [
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    "ENV GOTOOLCHAIN=local",
    "ENV GOFLAGS=-mod=mod",
    "WORKDIR /",
    'CMD ["/bin/bash"]',
]


def ensure_base_image(config: BaseImageConfig, client: docker.DockerClient) -> str:
    """Return the base image tag, making the image only when it is missing."""
    tag = config.tag
    if image_exists(client, tag):
        return tag
    if config.pulled and _try_pulled(config, client, tag):
        return tag
    tarball = config.cache_dir / f"rootfs-{config.recipe_hash()}.tar"
    if not tarball.exists():
        _bootstrap(config, tarball)
    _import(client, tarball, tag)
    return tag


def _try_pulled(config: BaseImageConfig, client: docker.DockerClient, tag: str) -> bool:
    """Tag a configured pulled image as the base when the engine has it or can pull it."""
    assert config.pulled is not None
    try:
        image = client.images.get(config.pulled)
    except ImageNotFound:
        try:
            image = client.images.pull(config.pulled)
        except APIError as exc:
            log.info("cannot pull %s (%s); bootstrapping instead", config.pulled, exc)
            return False
    repo, _, version = tag.partition(":")
    image.tag(repo, version)
    return True


def _errors(logfile: Path) -> str:
    """debootstrap's own "E:" lines, for the message: a suite without the default packages
    (sid has no rustc-web) failed as "debootstrap exited 1", its reason only in the log."""
    lines = [
        ln[3:].strip() for ln in logfile.read_text(errors="replace").splitlines() if ln.startswith("E: ")
    ]
    return f": {'; '.join(lines)} (base.packages lists what is installed)" if lines else ""


def _bootstrap(config: BaseImageConfig, tarball: Path) -> None:
    """debootstrap a minbase rootfs with the packages, then tar it (atomically)."""
    if shutil.which("debootstrap") is None:
        raise ImageError("debootstrap is not installed (apt-get install debootstrap)")
    tarball.parent.mkdir(parents=True, exist_ok=True)
    logfile = tarball.with_suffix(".log")
    with tempfile.TemporaryDirectory(prefix="tf-rootfs-", dir=tarball.parent) as tmp:
        rootfs = Path(tmp) / "rootfs"
        cmd = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(config.packages)}",
            config.suite,
            str(rootfs),
            config.mirror,
        ]
        log.info("bootstrapping %s into %s", config.suite, rootfs)
        with logfile.open("wb") as out:
            proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False)
        if proc.returncode != 0:
            raise ImageError(f"debootstrap exited {proc.returncode}{_errors(logfile)}", logfile)
        _configure_rootfs(rootfs, config)
        partial = tarball.with_suffix(".tar.part")
        subprocess.run(["tar", "-C", str(rootfs), "-cf", str(partial), "."], check=True)
        os.replace(partial, tarball)


#: where the base image's apt is told to take an expired Release file
SNAPSHOT_CONF = "etc/apt/apt.conf.d/99taskfoundry-snapshot"


def apt_files(config: BaseImageConfig) -> dict[str, str]:
    """The base image's apt files, by path under its root: its sources, and the setting for a
    snapshot mirror. (The build stage's toolchain layer runs `apt-get update` with them.)"""
    files = {"etc/apt/sources.list": f"deb {config.mirror} {config.suite} main\n"}
    if not config.check_valid_until:
        files[SNAPSHOT_CONF] = 'Acquire::Check-Valid-Until "false";\n'
    return files


def _configure_rootfs(rootfs: Path, config: BaseImageConfig) -> None:
    """apt sources for later package installs, and the non-root worker user."""
    for path, text in apt_files(config).items():
        (rootfs / path).write_text(text)
    subprocess.run(
        ["chroot", str(rootfs), "useradd", "-m", "-u", "1000", "-s", "/bin/bash", "worker"],
        check=True,
    )
    subprocess.run(["chroot", str(rootfs), "apt-get", "clean"], check=True)


def _import(client: docker.DockerClient, tarball: Path, tag: str) -> None:
    repo, _, version = tag.partition(":")
    log.info("importing %s as %s", tarball, tag)
    try:
        client.api.import_image_from_file(str(tarball), repository=repo, tag=version, changes=_CHANGES)
    except APIError as exc:
        raise ImageError(f"docker import of {tarball} failed: {exc}") from exc
    if not image_exists(client, tag):
        raise ImageError(f"docker import did not produce {tag}")
