"""PyPI projects with console scripts, dated by their latest release's upload time.

PyPI lists names (the simple index) but not by date, and its RSS and XML-RPC changelog are
not reachable here, so the seed is Debian's source packages of Python distributions (built by
pybuild, a pypi.org Homepage or a `python-*` name; the PyPI name from the Homepage, else the
source name without `python-`), those shipping a program first.
Console scripts are read from a wheel's entry_points.txt with range requests (`wheel.py`).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from typing import Any

from taskfoundry.discover.debindex import SourcePackage, recent_first
from taskfoundry.discover.models import RegistryReport, Row, Verdict, no, unchecked, yes
from taskfoundry.discover.walk import Walk, from_origin, utc, walk, window
from taskfoundry.discover.wheel import console_scripts, entry_points

_HOMEPAGE = re.compile(r"pypi\.(?:org/project|python\.org/pypi)/([A-Za-z0-9._-]+)")


def pypi_name(pkg: SourcePackage) -> str:
    match = _HOMEPAGE.search(pkg.homepage)
    return match[1] if match else pkg.name.removeprefix("python-")


def seed(w: Walk, origin: dict[str, SourcePackage]) -> Iterator[tuple[str, str]]:
    """(name, why) in walk order; `origin` learns the Debian package each name came from."""
    yield from ((n, "configured seed") for n in w.seeds)
    python = [p for p in w.debian() if p.python_dist]
    for pkg in sorted(recent_first(python), key=lambda p: (not p.fresh, not p.programs)):  # stable
        why = "Debian ships its program" if pkg.programs else "Debian packages it"
        origin[pypi_name(pkg)] = pkg
        yield pypi_name(pkg), f"debian {pkg.name}: {why}" + ("; a fresh upload" if pkg.fresh else "")


def discover(w: Walk) -> RegistryReport:
    base = w.sources.pypi.json_api.rstrip("/")
    origin: dict[str, SourcePackage] = {}

    def look(name: str, why: str) -> Row:
        url = f"{base}/{urllib.parse.quote(name)}/json"
        row = _row(w, url, w.client.json(url), why)
        return row.model_copy(update=from_origin(origin.get(name)))

    return walk("pypi", w, seed(w, origin), look)


def _row(w: Walk, url: str, meta: dict[str, Any], why: str) -> Row:
    info = meta["info"]
    version = str(info["version"])
    files = [f for f in meta.get("releases", {}).get(version, meta.get("urls", [])) if not f.get("yanked")]
    times = [utc(f["upload_time_iso_8601"]) for f in files if f.get("upload_time_iso_8601")]
    released = min(times) if times else None
    row = Row(
        registry="pypi",
        name=str(info["name"]),
        version=version,
        source=f"pypi:{info['name']}=={version}",
        released=released,
        language="python",
        seed=why,
    )
    outside = window(released, w.since, "the release has no files")
    if outside is not None:
        return row.model_copy(update={"verdicts": outside})
    # entry points are the same in every wheel of a release: a Linux x86-64 one reads first
    wheels = sorted(
        (f for f in files if f.get("packagetype") == "bdist_wheel"),
        key=lambda f: "linux_x86_64" not in f["filename"],
    )
    pure = [f for f in wheels if f["filename"].endswith("-none-any.whl")]
    has_sdist = any(f.get("packagetype") == "sdist" for f in files)
    program, scripts = _program(w, url, pure or wheels, has_sdist)
    function = (
        yes("pure-Python wheel")
        if pure
        else (no("compiled wheels only") if wheels else unchecked("no wheel: the sdist was not read"))
    )
    verdicts = {
        "program": program,
        "function": function,
        "feature": unchecked("not checked: the test suite is in the sdist, not read"),
    }
    executable = scripts[0] if len(scripts) == 1 else None
    return row.model_copy(update={"verdicts": verdicts, "executable": executable})


def _program(w: Walk, url: str, wheels: list[dict[str, Any]], has_sdist: bool) -> tuple[Verdict, list[str]]:
    if not has_sdist:
        return no("no sdist to build from"), []
    if not wheels:
        return unchecked("no wheel: entry points are in the sdist's build config, not read"), []
    wheel = wheels[0]
    scripts = console_scripts(
        entry_points(w.client, urllib.parse.urljoin(url, wheel["url"]), int(wheel["size"]))
    )
    if scripts:
        return yes("console script " + ", ".join(f"`{s}`" for s in scripts[:3])), scripts
    return no(f"no console script in {wheel['filename']}"), []
