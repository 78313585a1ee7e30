"""`pypi:NAME[==VERSION]`: a project's sdist, found through PyPI's JSON API."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path
from typing import Any

from taskfoundry.errors import SourceError, SourceUnavailable
from taskfoundry.sources.checkout import Checkout, Upstream
from taskfoundry.sources.fetch import get_json
from taskfoundry.sources.registry import SourceConfig, checkout_release

_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(==(?P<version>[^=\s]+))?$")


def parse(spec: str) -> tuple[str, str | None]:
    match = _SPEC.match(spec.strip())
    if not match:
        raise SourceError(f"pypi:{spec}: expected pypi:NAME or pypi:NAME==VERSION")
    return match["name"], match["version"]


def check(spec: str, config: SourceConfig) -> None:
    """The release exists and has an sdist: one metadata look-up, nothing downloaded."""
    name, version = parse(spec)
    _sdist(get_json(_meta_url(name, config)), name, version)


def _meta_url(name: str, config: SourceConfig) -> str:
    return f"{config.pypi.json_api.rstrip('/')}/{urllib.parse.quote(name)}/json"


def fetch(spec: str, workdir: Path, config: SourceConfig) -> Checkout:
    name, version = parse(spec)
    url = _meta_url(name, config)
    meta = get_json(url)  # one look-up: it lists every release
    release, sdist = _sdist(meta, name, version)
    sdist["url"] = urllib.parse.urljoin(url, sdist["url"])  # mirrors may answer relative URLs
    up = Upstream(
        registry="pypi",
        name=str(meta["info"]["name"]),
        version=release,
        url=sdist["url"],
        sha256=sdist["digests"]["sha256"],
    )
    return checkout_release(up, sdist["filename"], f"pypi:{name}", workdir, config.cache(workdir))


def _sdist(meta: dict[str, Any], name: str, pinned: str | None) -> tuple[str, dict[str, Any]]:
    """(version, sdist file) of the release asked for; unpinned: the latest one with an sdist."""
    releases = meta.get("releases", {})
    if pinned and pinned not in releases:
        raise SourceUnavailable(f"pypi:{name}=={pinned}: not available (no such release)")
    version = pinned or str(meta["info"]["version"])
    files = _sdists(releases[pinned] if pinned else meta.get("urls", []))
    if files:
        return version, files[0]
    if not pinned:  # the latest release may ship wheels only: take the newest sdist upload
        candidates = [(f["upload_time_iso_8601"], v, f) for v, fs in releases.items() for f in _sdists(fs)]
        if candidates:
            _, older, sdist = max(candidates, key=lambda c: c[0])
            return str(older), sdist
    raise SourceUnavailable(f"pypi:{name} {version}: not available (no sdist published)")


def _sdists(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(f) for f in files if f.get("packagetype") == "sdist" and not f.get("yanked")]
