"""`debian:PKG[=VERSION]`: the upstream tarball of a Debian source package.

apt does the look-up, with its own private state (a sources.list with one
`deb-src` line for the configured suite, lists and caches under the cache
directory), so the host's apt setup is neither needed nor changed. apt only
prints the URIs; the upstream tarball alone is downloaded and its SHA256 checked.
"""

from __future__ import annotations

import dataclasses
import fcntl
import logging
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from taskfoundry.errors import SourceError, SourceUnavailable
from taskfoundry.sources.checkout import Checkout, Upstream
from taskfoundry.sources.fetch import download, unpack
from taskfoundry.sources.gitrepo import mkdirs
from taskfoundry.sources.registry import DebianConfig, SourceConfig, checkout_release

log = logging.getLogger(__name__)

_SPEC = re.compile(r"^(?P<name>[a-z0-9][a-z0-9.+-]+)(=(?P<version>[A-Za-z0-9.+:~-]+))?$")
_URI = re.compile(r"^'(?P<url>[^']+)' (?P<file>\S+) (?P<size>\d+) SHA256:(?P<sha>[0-9a-f]{64})$")
_TARBALL = re.compile(r"\.tar\.(gz|xz|bz2|lzma|zst)$")


def parse(spec: str) -> tuple[str, str | None]:
    match = _SPEC.match(spec.strip())
    if not match:
        raise SourceError(f"debian:{spec}: expected debian:PKG or debian:PKG=VERSION")
    return match["name"], match["version"]


def check(spec: str, config: SourceConfig) -> None:
    """The spec's form only: whether a suite has the package needs its index (apt's update,
    minutes on a cold cache), which the source stage reads."""
    parse(spec)


def fetch(spec: str, workdir: Path, config: SourceConfig) -> Checkout:
    """The source from the configured suite; where its index names a version the pool no longer
    serves (trixie's libidn2 2.3.8-2: a 404), or does not list it, from the first of
    `fallback_suites` that has one, with a warning naming the version built instead."""
    name, version = parse(spec)
    try:
        return _fetch_from(name, version, workdir, config, config.debian)
    except SourceUnavailable as missing:
        return _from_another_suite(name, version, workdir, config, missing)


def _from_another_suite(
    name: str, version: str | None, workdir: Path, config: SourceConfig, missing: SourceUnavailable
) -> Checkout:
    chosen = config.debian.suite
    tried = [f"{chosen}: {missing}"]
    for suite in (s for s in config.debian.fallback_suites if s != chosen):
        other = config.debian.model_copy(update={"suite": suite})
        try:
            co = _fetch_from(name, version, workdir, config, other)
        except SourceError as exc:  # not there either, or that suite cannot be read
            tried.append(f"{suite}: {exc}")
            continue
        built = co.upstream.version if co.upstream else "?"
        log.warning("debian:%s: %s; built %s's %s instead", name, missing, suite, built)
        return co
    raise SourceUnavailable(f"debian:{name}: not available in any suite ({'; '.join(tried)})") from missing


def _fetch_from(
    name: str, version: str | None, workdir: Path, config: SourceConfig, suite: DebianConfig
) -> Checkout:
    state = mkdirs(config.cache(workdir) / f"apt-{suite.suite}")
    with _locked(state):
        _update(state, suite)
        uris = _print_uris(state, f"{name}={version}" if version else name)
    up, archive = upstream_tarball(name, uris)
    dsc = next(u for u in uris if u["file"].endswith(".dsc"))
    cache = config.cache(workdir)
    where = cache / "downloads" / f"{dsc['sha'][:16]}-{dsc['file']}"
    text = download(dsc["url"], where, dsc["sha"]).read_text(errors="replace")
    up = dataclasses.replace(up, build_depends=build_depends(text), programs=program_packages(text))
    return checkout_release(up, archive, f"debian:{name}", workdir, cache, _patcher(uris, cache))


# packaging tools, not what the program builds with; and the image's own Rust, whose
# rustc-web `apt-get install rustc` would replace by trixie's older rustc
_PACKAGING = re.compile(
    r"^(debhelper|debhelper-compat|dh-.*|dpkg-.*|quilt|cdbs|lsb-release|po-debconf|rustc|cargo)$"
)


def build_depends(dsc: str) -> tuple[str, ...]:
    """The packages a `.dsc`'s Build-Depends and Build-Depends-Arch name: the first of each set of
    alternatives, without versions, architectures or `:native`; packaging tools and what only
    the `nodoc` profile leaves out (documentation) are left out too."""
    fields = re.findall(r"^Build-Depends(?:-Arch)?:(.*(?:\n[ \t].*)*)", dsc, re.M)
    names = []
    for entry in ",".join(fields).split(","):
        first = entry.split("|")[0]
        if "<!nodoc>" in first.replace(" ", ""):
            continue
        match = re.match(r"\s*([a-z0-9][a-z0-9.+-]+)", first)
        if match and not _PACKAGING.match(match[1]):
            names.append(match[1])
    if any(_GIR_DATA.match(n) for n in names):
        names += _GIR_TOOLS
    return tuple(dict.fromkeys(names))


# GObject introspection data (`gir1.2-gee-0.8-dev`): a source naming it builds .gir and .typelib
# files, with the tools that sid's packages bring along and trixie's do not (folks: "Program
# 'g-ir-compiler' not found"; then "Could not find GIR file 'libxml2-2.0.gir'")
_GIR_DATA = re.compile(r"^gir1\.2-.*-dev$")
_GIR_TOOLS = ["gobject-introspection", "libgirepository1.0-dev"]


# binary packages that ship no program of their own: libraries, headers, docs, data, debug symbols
_NOT_PROGRAM = re.compile(
    r"^(lib.*|python3?-.*|golang-.*|.*-(dev|doc|dbg|dbgsym|udeb|data|common|examples))$"
)


def program_packages(dsc: str) -> tuple[str, ...]:
    """The binary packages a `.dsc`'s Binary field lists that look like programs (libzstd's
    `zstd`): the name to look for among several a build makes (`builders.pick.choose`)."""
    match = re.search(r"^Binary:(.*(?:\n[ \t].*)*)", dsc, re.M)
    names = [n.strip() for n in match[1].split(",")] if match else []
    return tuple(n for n in names if n and not _NOT_PROGRAM.match(n))


_DEBIAN_TAR = re.compile(r"\.debian\.tar\.(gz|xz|bz2)$")


def _patcher(uris: list[dict[str, str]], cache: Path) -> Callable[[Path], str] | None:
    """What applies a `3.0 (quilt)` source's patch series to the upstream tree, as Debian
    builds it (mender-artifact's `0004-Remove-vault-signer.patch` drops an import no
    packaged library provides); None for a source without a `.debian.tar`."""
    tar = next((u for u in uris if _DEBIAN_TAR.search(u["file"])), None)
    if tar is None:
        return None

    def apply(tree: Path) -> str:
        where = cache / "downloads" / f"{tar['sha'][:16]}-{tar['file']}"
        with tempfile.TemporaryDirectory(prefix="tf-debian-") as tmp:
            debian = unpack(download(tar["url"], where, tar["sha"]), Path(tmp) / "debian")
            done, total = apply_series(debian / "patches", tree)
        return f"debian patches: {done} of {total} applied ({tar['file']} sha256:{tar['sha']})\n"

    return apply


def apply_series(patches: Path, tree: Path) -> tuple[int, int]:
    """Apply `patches/series` in order with patch(1); the first that does not apply stops the
    series (a later one may build on it), with a warning. (applied, listed)."""
    series = patches / "series"
    entries = [ln.split("#")[0].split() for ln in series.read_text().splitlines()] if series.is_file() else []
    entries = [e for e in entries if e]
    if entries and shutil.which("patch") is None:
        log.warning("%s: patch(1) is not installed; the Debian patches are not applied", tree.name)
        return 0, len(entries)
    for done, (name, *opts) in enumerate(entries):
        strip = next((o for o in opts if re.fullmatch(r"-p\d", o)), "-p1")
        cmd = ["patch", strip, "--batch", "--forward", "--silent", "--no-backup-if-mismatch"]
        cmd += ["-d", str(tree), "-i", str(patches / name)]
        # a dry run first: a patch that fails part-way leaves hunks applied and .rej files
        proc = subprocess.run([*cmd, "--dry-run"], capture_output=True, text=True, check=False)
        if proc.returncode == 0:
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            log.warning("debian patch %s does not apply: %s", name, (proc.stdout + proc.stderr).strip()[:300])
            return done, len(entries)
    return len(entries), len(entries)


def upstream_tarball(name: str, uris: list[dict[str, str]]) -> tuple[Upstream, str]:
    """The `.orig.tar.*` among a source package's files (or the only tarball, if native)."""
    dsc = next((u for u in uris if u["file"].endswith(".dsc")), None)
    if dsc is None:
        raise SourceError(f"debian:{name}: apt listed no .dsc file")
    version = dsc["file"][len(name) + 1 : -len(".dsc")]
    tarballs = [u for u in uris if _TARBALL.search(u["file"]) and ".debian." not in u["file"]]
    orig = [u for u in tarballs if ".orig.tar." in u["file"]] or tarballs
    if not orig:
        raise SourceUnavailable(f"debian:{name} {version}: not available (no upstream tarball)")
    chosen = orig[0]
    up = Upstream(registry="debian", name=name, version=version, url=chosen["url"], sha256=chosen["sha"])
    return up, chosen["file"]


def _apt_options(state: Path) -> list[str]:
    return [
        "-o",
        f"Dir::Etc::SourceList={state / 'sources.list'}",
        "-o",
        "Dir::Etc::SourceParts=/nonexistent",
        "-o",
        f"Dir::State::Lists={state / 'lists'}",
        "-o",
        f"Dir::Cache={state / 'cache'}",
        "-o",
        "Debug::NoLocking=1",
        "-o",
        "APT::Sandbox::User=root",
    ]


def _apt(state: Path, args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    if shutil.which("apt-get") is None:
        raise SourceError("debian sources need apt-get on the host (not found)")
    return subprocess.run(
        ["apt-get", *_apt_options(state), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={"LANG": "C", "PATH": "/usr/bin:/bin"},
    )


def _update(state: Path, cfg: DebianConfig) -> None:
    """Refresh the private Sources index when it is missing or older than `max_age_hours`."""
    trust = "trusted=yes" if cfg.trusted else f"signed-by={cfg.keyring}"
    line = f"deb-src [{trust}] {cfg.mirror} {cfg.suite} {' '.join(cfg.components)}\n"
    listing = state / "sources.list"
    stamp = state / "updated"
    fresh = stamp.exists() and time.time() - stamp.stat().st_mtime < cfg.max_age_hours * 3600
    if fresh and listing.exists() and listing.read_text() == line:
        return
    listing.write_text(line)
    for sub in ("lists/partial", "cache/archives/partial"):
        mkdirs(state / sub)
    log.info("apt-get update for deb-src %s %s", cfg.mirror, cfg.suite)
    proc = _apt(state, ["update", "-qq"])
    if proc.returncode != 0 or "W: Failed" in proc.stderr or "E:" in proc.stderr:
        raise SourceError(f"apt-get update (deb-src {cfg.suite}) failed: {proc.stderr.strip()}")
    stamp.touch()


def _print_uris(state: Path, what: str) -> list[dict[str, str]]:
    with tempfile.TemporaryDirectory(prefix="tf-apt-") as empty:  # apt skips files already present
        proc = _apt(state, ["source", "--print-uris", "-qq", what], cwd=Path(empty))
    if proc.returncode != 0:
        errors = " ".join(ln.removeprefix("E: ") for ln in proc.stderr.splitlines() if ln.startswith("E:"))
        raise SourceUnavailable(f"debian:{what}: not available ({errors or proc.stderr.strip()})")
    return [m.groupdict() for m in map(_URI.match, proc.stdout.splitlines()) if m]


@contextmanager
def _locked(state: Path) -> Iterator[None]:
    with (state / "lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
