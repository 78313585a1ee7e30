"""`crate:NAME[@VERSION]`: a crate release from the registry, read as cargo reads it.

The sparse index gives every release with its sha256 and rust-version; its
`config.json` gives the download template. With no version, the newest stable,
unyanked release that the build image's rustc can compile is taken.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from taskfoundry.errors import SourceError, SourceUnavailable
from taskfoundry.sources.checkout import Checkout, Upstream
from taskfoundry.sources.fetch import get_bytes, get_json
from taskfoundry.sources.registry import SourceConfig, checkout_release

_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9_-]+)(@(?P<version>[0-9][0-9A-Za-z.+-]*))?$")


def parse(spec: str) -> tuple[str, str | None]:
    match = _SPEC.match(spec.strip())
    if not match:
        raise SourceError(f"crate:{spec}: expected crate:NAME or crate:NAME@VERSION")
    return match["name"], match["version"]


def index_path(name: str) -> str:
    """The sparse-index path of a crate: 1/a, 2/ab, 3/a/abc, ab/cd/abcd..."""
    low = name.lower()
    if len(low) <= 2:
        return f"{len(low)}/{low}"
    if len(low) == 3:
        return f"3/{low[0]}/{low}"
    return f"{low[:2]}/{low[2:4]}/{low}"


def check(spec: str, config: SourceConfig) -> None:
    """A release to build exists: one index look-up, nothing downloaded."""
    name, version = parse(spec)
    _pick(_releases(name, config), name, version, config.crates.max_rust_version)


def _releases(name: str, config: SourceConfig) -> list[dict[str, Any]]:
    index = config.crates.index.rstrip("/")
    lines = get_bytes(f"{index}/{index_path(name)}").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def fetch(spec: str, workdir: Path, config: SourceConfig) -> Checkout:
    name, version = parse(spec)
    index = config.crates.index.rstrip("/")
    release = _pick(_releases(name, config), name, version, config.crates.max_rust_version)
    dl = str(get_json(f"{index}/config.json")["dl"])
    url = download_url(dl, release["name"], release["vers"], release["cksum"])
    up = Upstream(
        registry="crates.io", name=release["name"], version=release["vers"], url=url, sha256=release["cksum"]
    )
    archive = f"{release['name']}-{release['vers']}.crate"
    return checkout_release(up, archive, f"crate:{name}", workdir, config.cache(workdir))


def download_url(dl: str, name: str, version: str, cksum: str) -> str:
    """cargo's rule: fill the markers of `dl`, or append `/{crate}/{version}/download`."""
    markers = {
        "{crate}": name,
        "{version}": version,
        "{prefix}": index_path(name).rsplit("/", 1)[0],
        "{lowerprefix}": index_path(name).rsplit("/", 1)[0],
        "{sha256-checksum}": cksum,
    }
    if not any(m in dl for m in markers):
        return f"{dl.rstrip('/')}/{name}/{version}/download"
    for marker, value in markers.items():
        dl = dl.replace(marker, value)
    return dl


def _pick(
    releases: list[dict[str, Any]], name: str, version: str | None, max_rust: str | None
) -> dict[str, Any]:
    if not releases:
        raise SourceUnavailable(f"crate:{name}: not available (no releases)")
    if version:
        for rel in releases:
            if rel["vers"] == version:
                return rel
        raise SourceUnavailable(f"crate:{name}@{version}: not available (no such release)")
    ok = [
        r
        for r in releases
        if not r.get("yanked") and "-" not in r["vers"] and fits(r.get("rust_version"), max_rust)
    ]
    if not ok:
        raise SourceError(f"crate:{name}: no stable release builds with rustc {max_rust}")
    return max(ok, key=lambda r: _key(r["vers"]))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("+")[0].split("."))


def fits(needed: str | None, have: str | None) -> bool:
    """`rust-version` `needed` builds with rustc `have` (1.85.0 fits 1.85: missing parts are 0)."""
    if needed is None or have is None:
        return True
    width = max(len(_key(needed)), len(_key(have)))
    return _key(needed) + (0,) * (width - len(_key(needed))) <= _key(have) + (0,) * (width - len(_key(have)))
