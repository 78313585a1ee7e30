"""Registry providers (pypi:, crate:, debian:) against a loopback fake of each registry."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from taskfoundry.errors import SourceError, SourceUnavailable
from taskfoundry.sources import SourceConfig, resolve_source
from taskfoundry.sources.debian import build_depends
from taskfoundry.sources.registry import CratesConfig, DebianConfig, PyPIConfig


def _tarball(top: str, files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime, info.uid = len(data), 946684800, 4242
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class FakeRegistry:
    """path -> bytes over HTTP on 127.0.0.1; anything else is a 404."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        routes = self.files

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                body = routes.get(self.path.split("?")[0])
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    registry = FakeRegistry()
    yield registry
    registry.close()


def _config(fake: FakeRegistry, tmp: Path) -> SourceConfig:
    return SourceConfig(
        pypi=PyPIConfig(json_api=f"{fake.url}/pypi"),
        crates=CratesConfig(index=f"{fake.url}/index", max_rust_version="1.85"),
        debian=DebianConfig(mirror=f"{fake.url}/debian", suite="fake", trusted=True),
        cache_dir=tmp / "cache",
    )


def _sdist(fake: FakeRegistry, version: str, sha: str | None = None) -> dict[str, object]:
    data = _tarball(
        f"demo-{version}", {"pyproject.toml": "[project]\nname='demo'\n", "demo.py": f"V = '{version}'\n"}
    )
    fake.files[f"/files/demo-{version}.tar.gz"] = data
    return {
        "packagetype": "sdist",
        "filename": f"demo-{version}.tar.gz",
        "yanked": False,
        "url": f"{fake.url}/files/demo-{version}.tar.gz",
        "upload_time_iso_8601": f"2024-0{version[0]}",
        "digests": {"sha256": sha or hashlib.sha256(data).hexdigest()},
    }


def _pypi(fake: FakeRegistry, latest_has_sdist: bool = True) -> None:
    one, two = _sdist(fake, "1.0"), _sdist(fake, "2.0")
    wheel = {"packagetype": "bdist_wheel", "filename": "demo-2.0-py3-none-any.whl"}
    latest = [wheel, two] if latest_has_sdist else [wheel]
    meta = {
        "info": {"name": "demo", "version": "2.0"},
        "urls": latest,
        "releases": {"1.0": [one], "2.0": latest},
    }
    fake.files["/pypi/demo/json"] = json.dumps(meta).encode()


def test_pypi_sdist_is_a_deterministic_checkout(fake: FakeRegistry, tmp_path: Path) -> None:
    _pypi(fake)
    first = resolve_source("pypi:demo", tmp_path / "a", _config(fake, tmp_path / "a"))
    again = resolve_source("pypi:demo", tmp_path / "b", _config(fake, tmp_path / "b"))
    assert first.commit == again.commit and first.task_id == f"pypi__demo.{first.commit[:7]}"
    assert (first.path / "demo.py").read_text() == "V = '2.0'\n" and (first.path / ".git").is_dir()
    assert first.upstream is not None and (first.upstream.registry, first.upstream.version) == ("pypi", "2.0")


def test_pypi_pinned_version_and_wheel_only_latest(fake: FakeRegistry, tmp_path: Path) -> None:
    _pypi(fake, latest_has_sdist=False)
    pinned = resolve_source("pypi:demo==1.0", tmp_path, _config(fake, tmp_path))
    assert pinned.upstream is not None and pinned.upstream.version == "1.0"
    latest = resolve_source("pypi:demo", tmp_path, _config(fake, tmp_path))
    assert latest.upstream is not None and latest.upstream.version == "1.0"  # newest with an sdist
    with pytest.raises(SourceUnavailable, match=r"pypi:demo==3.0: not available"):
        resolve_source("pypi:demo==3.0", tmp_path, _config(fake, tmp_path))


def test_pypi_digest_mismatch_is_refused(fake: FakeRegistry, tmp_path: Path) -> None:
    meta = {
        "info": {"name": "demo", "version": "1.0"},
        "urls": [_sdist(fake, "1.0", sha="0" * 64)],
        "releases": {},
    }
    fake.files["/pypi/demo/json"] = json.dumps(meta).encode()
    with pytest.raises(SourceError, match="does not match the registry"):
        resolve_source("pypi:demo", tmp_path, _config(fake, tmp_path))
    assert not (tmp_path / "sources").exists() or not any((tmp_path / "sources").iterdir())


def _crates(fake: FakeRegistry) -> None:
    fake.files["/index/config.json"] = json.dumps({"dl": f"{fake.url}/dl"}).encode()
    lines = []
    for version, rust in (("0.1.0", "1.60"), ("0.2.0", "1.80"), ("0.3.0", "1.99"), ("0.4.0-rc1", None)):
        data = _tarball(
            f"democli-{version}",
            {"Cargo.toml": "[package]\nname='democli'\n", "src/main.rs": "fn main() {}\n"},
        )
        fake.files[f"/dl/democli/{version}/download"] = data
        lines.append(
            json.dumps(
                {
                    "name": "democli",
                    "vers": version,
                    "yanked": False,
                    "deps": [],
                    "cksum": hashlib.sha256(data).hexdigest(),
                    "rust_version": rust,
                }
            )
        )
    fake.files["/index/de/mo/democli"] = "\n".join(lines).encode()


def test_crate_newest_release_the_image_rustc_builds(fake: FakeRegistry, tmp_path: Path) -> None:
    _crates(fake)
    co = resolve_source("crate:democli", tmp_path, _config(fake, tmp_path))
    assert co.upstream is not None and co.upstream.version == "0.2.0"  # 0.3.0 needs rustc 1.99
    assert co.task_id.startswith("crate__democli.") and (co.path / "src/main.rs").exists()
    pinned = resolve_source("crate:democli@0.3.0", tmp_path, _config(fake, tmp_path))
    assert pinned.upstream is not None and pinned.upstream.version == "0.3.0"
    with pytest.raises(SourceUnavailable, match="not available"):
        resolve_source("crate:democli@9.9.9", tmp_path, _config(fake, tmp_path))


# a .dsc's build dependencies as sid writes them: versions, architectures, profiles, alternatives;
# rustc and cargo are the image's own (rustc-web), never trixie's older rustc in its place
DEPENDS = (
    "Build-Depends: debhelper-compat (= 13), libpcap-dev [linux-any], pkgconf | pkg-config,\n"
    " python3-sphinx <!nodoc>, zlib1g-dev:native (>= 1:1.2), libcheck-dev <!nocheck>\n"
    "Build-Depends-Arch: libssl-dev, cargo:native, rustc:native (>= 1.80)\n"
    "Build-Depends-Indep: texlive-latex-base\n"
)


FIX = (
    "--- a/configure.ac\n+++ b/configure.ac\n@@ -1 +1 @@\n"
    "-AC_INIT([demo], [1.0])\n+AC_INIT([demo], [1.0-debian])\n"
)
BROKEN = "--- a/missing.c\n+++ b/missing.c\n@@ -1 +1 @@\n-int x;\n+int y;\n"
AFTER = "--- /dev/null\n+++ b/after.txt\n@@ -0,0 +1 @@\n+after\n"
PATCHES = {
    "patches/series": "01-fix.patch\n# a comment\n02-broken.patch -p1\n03-after.patch\n",
    "patches/01-fix.patch": FIX,
    "patches/02-broken.patch": BROKEN,
    "patches/03-after.patch": AFTER,
}


def _debian(fake: FakeRegistry) -> None:
    """A one-suite deb-src archive: `demo` (upstream tarball served) and `gone` (tarball 404)."""
    _debian_suite(fake, "fake", [("demo", "1.0", True), ("gone", "1.0", False)])


def _debian_suite(fake: FakeRegistry, suite: str, packages: list[tuple[str, str, bool]]) -> None:
    """The suite's Sources index, listing each (name, upstream version, tarball served?)."""
    stanzas = []
    for name, up, served in packages:
        orig = _tarball(f"{name}-{up}", {"configure.ac": f"AC_INIT([{name}], [{up}])\n"})
        binary = f"Binary: lib{name}-dev, lib{name}1,\n {name}-bin, {name}-doc\n"
        dsc = f"Source: {name}\n{binary}Version: {up}-1\n{DEPENDS}".encode()
        pool = f"pool/main/{name[0]}/{name}"
        fake.files[f"/debian/{pool}/{name}_{up}-1.dsc"] = dsc
        if served:
            fake.files[f"/debian/{pool}/{name}_{up}.orig.tar.gz"] = orig
        files = [(f"{name}_{up}-1.dsc", dsc), (f"{name}_{up}.orig.tar.gz", orig)]
        if name == "demo":  # its packaging's patch series: one applies, the next does not
            packaging = _tarball("debian", PATCHES)
            fake.files[f"/debian/{pool}/{name}_{up}-1.debian.tar.gz"] = packaging
            files.append((f"{name}_{up}-1.debian.tar.gz", packaging))
        sums = "".join(f" {hashlib.sha256(d).hexdigest()} {len(d)} {f}\n" for f, d in files)
        md5 = "".join(f" {hashlib.md5(d).hexdigest()} {len(d)} {f}\n" for f, d in files)
        stanzas.append(
            f"Package: {name}\nBinary: {name}\nVersion: {up}-1\nMaintainer: t <t@t>\n"
            f"Architecture: any\nFormat: 3.0 (quilt)\nDirectory: {pool}\nFiles:\n{md5}"
            f"Checksums-Sha256:\n{sums}"
        )
    sources = "\n".join(stanzas).encode()
    fake.files[f"/debian/dists/{suite}/main/source/Sources"] = sources
    fake.files[f"/debian/dists/{suite}/Release"] = (
        f"Origin: fake\nSuite: {suite}\nCodename: {suite}\nComponents: main\nArchitectures: amd64 source\n"
        "Date: Sat, 01 Jan 2000 00:00:00 UTC\nSHA256:\n"
        f" {hashlib.sha256(sources).hexdigest()} {len(sources)} main/source/Sources\n"
    ).encode()


@pytest.mark.skipif(shutil.which("apt-get") is None, reason="debian sources need apt-get")
def test_debian_upstream_tarball(fake: FakeRegistry, tmp_path: Path) -> None:
    _debian(fake)
    co = resolve_source("debian:demo", tmp_path, _config(fake, tmp_path))
    assert co.task_id.startswith("debian__demo.") and (co.path / "configure.ac").exists()
    assert co.upstream is not None and (co.upstream.version, co.upstream.registry) == ("1.0-1", "debian")
    assert co.upstream.url.endswith("demo_1.0.orig.tar.gz")
    assert co.upstream.build_depends == ("libpcap-dev", "pkgconf", "zlib1g-dev", "libcheck-dev", "libssl-dev")
    assert co.upstream.programs == ("demo-bin",)  # the libraries and docs ship no program
    # Debian's patches applied as Debian builds it, up to the first that does not apply
    assert (co.path / "configure.ac").read_text() == "AC_INIT([demo], [1.0-debian])\n"
    assert not (co.path / "after.txt").exists() and not list(co.path.rglob("*.rej"))
    message = subprocess.run(
        ["git", "-C", str(co.path), "log", "-1", "--format=%B"], capture_output=True, text=True
    )
    assert "debian patches: 1 of 3 applied (demo_1.0-1.debian.tar.gz" in message.stdout
    with pytest.raises(SourceUnavailable, match=r"not available: .*gone_1.0.orig.tar.gz \(404"):
        resolve_source("debian:gone", tmp_path, _config(fake, tmp_path))  # in no fallback suite either
    with pytest.raises(SourceUnavailable, match=r"debian:nothere: not available"):
        resolve_source("debian:nothere", tmp_path, _config(fake, tmp_path))


@pytest.mark.skipif(shutil.which("apt-get") is None, reason="debian sources need apt-get")
def test_a_version_the_pool_no_longer_serves_is_built_from_a_suite_that_serves_one(
    fake: FakeRegistry, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """trixie's index named libidn2 2.3.8-2 and its pool answered 404: the previous suite's
    version is there, and is built, with a warning that says which."""
    _debian(fake)
    _debian_suite(fake, "older", [("gone", "0.9", True)])
    config = _config(fake, tmp_path)
    config.debian.fallback_suites = ["missing-suite", "older"]  # the first cannot even be read
    with caplog.at_level("WARNING", logger="taskfoundry.sources.debian"):
        co = resolve_source("debian:gone", tmp_path, config)
    assert co.upstream is not None and co.upstream.version == "0.9-1"
    assert (co.path / "configure.ac").read_text() == "AC_INIT([gone], [0.9])\n"
    assert "built older's 0.9-1 instead" in caplog.text and "gone_1.0.orig.tar.gz (404" in caplog.text
    config.debian.fallback_suites = []  # the fallback off: the 404 is the answer
    with pytest.raises(SourceUnavailable, match=r"not available in any suite \(fake: not available: .*404"):
        resolve_source("debian:gone", tmp_path, config)


def test_a_source_building_gobject_introspection_data_gets_its_tools() -> None:
    """folks' sid Build-Depends name `gir1.2-*-dev` packages, which on trixie do not bring
    `g-ir-compiler` (meson: "Program 'g-ir-compiler' not found"): the tools are added."""
    dsc = (
        "Source: folks\nBuild-Depends: debhelper-compat (= 13),\n gir1.2-gee-0.8-dev,\n"
        " libglib2.0-dev (>= 2.58),\n meson,\n valac\nBinary: folks-tools\n"
    )
    tools = ("gobject-introspection", "libgirepository1.0-dev")
    assert build_depends(dsc) == ("gir1.2-gee-0.8-dev", "libglib2.0-dev", "meson", "valac", *tools)
    assert build_depends(dsc.replace("gir1.2-gee-0.8-dev", "libgee-0.8-dev"))[-1] == "valac"  # no GIR: none


def test_unknown_prefix_lists_the_providers(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"unknown source type 'npm'.*crate:, debian:, pypi:"):
        resolve_source("npm:left-pad", tmp_path)


def test_bad_registry_specs(tmp_path: Path) -> None:
    for bad, pattern in (("pypi:a b", "pypi:NAME"), ("crate:x@", "crate:NAME"), ("debian:A_B", "debian:PKG")):
        with pytest.raises(SourceError, match=pattern):
            resolve_source(bad, tmp_path)
