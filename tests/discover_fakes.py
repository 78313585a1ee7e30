"""A loopback fake of the three registries' APIs in their recorded shapes: PyPI's JSON API
and files (with HTTP ranges), the crate sparse index and its downloads, a Debian mirror's
Sources.xz and pool. Each request is counted, so a test can tell a cached answer."""

from __future__ import annotations

import io
import json
import lzma
import os
import re
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from taskfoundry.config import Config
from taskfoundry.discover.settings import DiscoverConfig
from taskfoundry.sources.registry import CratesConfig, DebianConfig, PyPIConfig, SourceConfig

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


class FakeRegistries:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.hits: list[str] = []
        self.honour_range = True
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.split("?")[0]
                fake.hits.append(path)
                body = fake.files.get(path)
                status = 200 if body is not None else 404
                match = _RANGE.fullmatch(self.headers.get("Range", ""))
                if body is not None and match and fake.honour_range:
                    first, last = match.groups()
                    start = len(body) - int(last) if not first else int(first)
                    end = len(body) if not first or not last else int(last) + 1
                    body, status = body[max(start, 0) : end], 206
                self.send_response(status)
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

    def sources(self, cache: Path) -> SourceConfig:
        return SourceConfig(
            pypi=PyPIConfig(json_api=f"{self.url}/pypi"),
            crates=CratesConfig(index=f"{self.url}/index", max_rust_version="1.85"),
            debian=DebianConfig(mirror=f"{self.url}/debian", suite="fake", trusted=True),
            cache_dir=cache,
        )

    def config(self, out: Path, **discover: object) -> Config:
        return Config(
            out=out, sources=self.sources(out / "cache"), discover=DiscoverConfig.model_validate(discover)
        )


def _tar(files: dict[str, bytes], mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:  # type: ignore[call-overload]
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _changelog(pkg: str, version: str, date: str) -> bytes:
    return (
        f"{pkg} ({version}) unstable; urgency=medium\n\n  * New upstream release.\n\n"
        f" -- A Maintainer <a@example.org>  {date}\n\n"
        f"{pkg} (0.1-1) unstable; urgency=medium\n\n  * Initial.\n\n"
        " -- A <a@example.org>  Mon, 01 Jan 2024 00:00:00 +0000\n"
    ).encode()


def _stanza(name: str, version: str, binaries: list[str], deps: str, homepage: str = "") -> str:
    directory = f"pool/main/{name[0]}/{name}"
    lines = [
        f"Package: {name}",
        f"Binary: {', '.join(b.split()[0] for b in binaries)}",
        f"Version: {version}",
    ]
    lines += [f"Build-Depends: {deps}", "Standards-Version: 4.7.2", "Package-List:"]
    lines += [f" {b} optional arch=any" for b in binaries]
    lines += [
        "Checksums-Sha256:",
        f" 0123 100 {name}_{version}.dsc",
        f" 0123 100 {name}_{version}.debian.tar.xz",
    ]
    lines += [f"Directory: {directory}"] + ([f"Homepage: {homepage}"] if homepage else [])
    return "\n".join(lines)


def _wheel(dist: str, scripts: list[str], pad_after: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if not pad_after:
            zf.writestr(f"{dist}/padding.bin", os.urandom(100_000), zipfile.ZIP_STORED)
        zf.writestr(f"{dist}.dist-info/METADATA", f"Name: {dist}\n")
        if scripts:
            text = "[console_scripts]\n" + "".join(f"{s} = {dist}:main\n" for s in scripts)
            zf.writestr(f"{dist}.dist-info/entry_points.txt", text)
        if pad_after:  # the dist-info far from the end: one more range read
            zf.writestr(f"{dist}/padding.bin", os.urandom(100_000), zipfile.ZIP_STORED)
    return buf.getvalue()


def _pypi(
    fake: FakeRegistries, name: str, version: str, uploaded: str, wheel: bytes | None, sdist: bool = True
) -> None:
    files = []
    if sdist:
        files.append(
            {
                "filename": f"{name}-{version}.tar.gz",
                "packagetype": "sdist",
                "url": f"/files/{name}.tar.gz",
                "size": 10,
                "upload_time_iso_8601": uploaded,
                "yanked": False,
            }
        )
    if wheel is not None:
        fake.files[f"/files/{name}-{version}-py3-none-any.whl"] = wheel
        files.append(
            {
                "filename": f"{name}-{version}-py3-none-any.whl",
                "packagetype": "bdist_wheel",
                "url": f"/files/{name}-{version}-py3-none-any.whl",
                "size": len(wheel),
                "upload_time_iso_8601": uploaded,
                "yanked": False,
            }
        )
    meta = {
        "info": {"name": name, "version": version},
        "releases": {"0.1": [], version: files},
        "urls": files,
    }
    fake.files[f"/pypi/{name}/json"] = json.dumps(meta).encode()


def _crate(fake: FakeRegistries, name: str, version: str, pubtime: str | None, files: dict[str, str]) -> None:
    prefix = name[:2] + "/" + name[2:4] if len(name) > 3 else f"3/{name[0]}"
    entry = {"name": name, "vers": version, "deps": [], "cksum": "00" * 32, "features": {}, "yanked": False}
    if pubtime:
        entry["pubtime"] = pubtime
    old = {**entry, "vers": "0.0.1"} | ({"pubtime": "2025-01-01T00:00:00Z"} if pubtime else {})
    fake.files[f"/index/{prefix}/{name}"] = (json.dumps(old) + "\n" + json.dumps(entry) + "\n").encode()
    fake.files[f"/dl/{name}/{version}/download"] = _tar(
        {f"{name}-{version}/{p}": t.encode() for p, t in files.items()}
    )


def populate(fake: FakeRegistries) -> None:
    """The recorded shapes: a month window from 2026-10-27 holds one candidate per registry
    and kind, an older release, a library, and a few broken answers."""
    stanzas = [
        _stanza("cprog", "1.2-1", ["cprog deb utils"], "debhelper-compat (= 13)"),
        _stanza("oldprog", "0.9-1", ["oldprog deb text"], "debhelper-compat (= 13)"),
        _stanza("brokenprog", "2.0-1", ["brokenprog deb utils"], "debhelper-compat (= 13)"),
        _stanza("goneprog", "1.1-1", ["goneprog deb utils"], "debhelper-compat (= 13)"),
        _stanza("guiprog", "3.0-1", ["guiprog deb graphics"], "debhelper-compat (= 13), libgtk-3-dev"),
        _stanza(
            "libfoo", "1.0-1", ["libfoo1 deb libs", "libfoo-dev deb libdevel"], "debhelper-compat (= 13)"
        ),
        _stanza("rust-tool", "1.0.0-1", ["tool deb utils"], "dh-cargo"),
        _stanza("rust-libthing", "0.3.0-1", ["librust-libthing-dev deb rust"], "dh-cargo"),
        _stanza("rust-nopub", "0.2.0-1", ["librust-nopub-dev deb rust"], "dh-cargo"),
        _stanza(
            "python-clitool",
            "1.0-1",
            ["clitool deb utils", "python3-clitool deb python"],
            "dh-python",
            "https://pypi.org/project/clitool",
        ),
        _stanza("python-purelib", "2.0-1", ["python3-purelib deb python"], "dh-sequence-python3"),
    ]
    fake.files["/debian/dists/fake/main/source/Sources.xz"] = lzma.compress(
        "\n\n".join(stanzas).encode() + b"\n"
    )
    for pkg, version, date in (
        ("guiprog", "3.0-1", "Mon, 02 Nov 2026 10:00:00 +0000"),
        ("cprog", "1.2-1", "Sun, 01 Nov 2026 10:00:00 +0000"),
        ("oldprog", "0.9-1", "Wed, 01 Jan 2025 10:00:00 +0000"),
        ("goneprog", "1.1-1", "Mon, 02 Nov 2026 11:00:00 +0000"),
    ):
        pool = f"/debian/pool/main/{pkg[0]}/{pkg}/{pkg}_{version}"
        fake.files[f"{pool}.debian.tar.xz"] = _tar(
            {"debian/changelog": _changelog(pkg, version, date)}, "w:xz"
        )
        if pkg != "goneprog":  # the mirror of this workplace lacks some pool files the index lists
            fake.files[f"{pool}.dsc"] = f"Source: {pkg}\nVersion: {version}\n".encode()
    fake.files["/index/config.json"] = json.dumps(
        {"dl": f"{fake.url}/dl/{{crate}}/{{version}}/download"}
    ).encode()
    _crate(
        fake,
        "tool",
        "1.0.0",
        "2026-11-05T12:00:00Z",
        {"Cargo.toml": "[package]\nname = 'tool'\n", "src/main.rs": "fn main() {}\n"},
    )
    _crate(
        fake,
        "libthing",
        "0.3.0",
        "2026-11-06T12:00:00Z",
        {"Cargo.toml": "[package]\nname = 'libthing'\n", "src/lib.rs": ""},
    )
    _crate(fake, "nopub", "0.2.0", None, {"Cargo.toml": "[package]\nname = 'nopub'\n", "src/lib.rs": ""})
    _pypi(fake, "clitool", "1.0", "2026-11-02T08:00:00Z", _wheel("clitool", ["clitool"], pad_after=True))
    _pypi(fake, "purelib", "2.0", "2026-11-03T08:00:00Z", _wheel("purelib", []))
    fake.files["/pypi/badjson/json"] = b"<html>an error page</html>"
