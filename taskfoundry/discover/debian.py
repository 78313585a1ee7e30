"""Debian: source packages of command-line programs, dated by their debian/changelog.

The Sources index lists every source package with its binaries' sections but no dates, and
the pool has no listing; the date of a version is the trailer of its top debian/changelog
entry, read from the small `.debian.tar.*` beside the `.dsc`. The walk takes the sources
the program rule accepts (`debindex.PROGRAM_SECTIONS`) in `debindex.recent_first` order.
"""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from taskfoundry.discover.debindex import SourcePackage, recent_first
from taskfoundry.discover.models import RegistryReport, Row, no, unchecked, yes
from taskfoundry.discover.walk import Walk, sections, walk, window
from taskfoundry.errors import SourceError, SourceUnavailable

_TRAILER = re.compile(r"^ -- .+?>  (?P<date>.+)$", re.M)
_KIND_NOTE = "not checked: a Debian source is taken as a program source"


def discover(w: Walk) -> RegistryReport:
    packages: dict[str, SourcePackage] = {}

    def index() -> dict[str, SourcePackage]:
        if not packages:
            packages.update((p.name, p) for p in w.debian())
        return packages

    def names() -> Iterator[tuple[str, str]]:
        yield from ((n, "configured seed") for n in w.seeds)
        for pkg in recent_first([p for p in index().values() if p.programs]):
            fresh = "a fresh upload; " if pkg.fresh else ""
            yield pkg.name, f"ships a program binary; {fresh}Standards-Version {pkg.standards}"

    def look(name: str, seed: str) -> Row:
        pkg = index().get(name)
        if pkg is None:
            return Row.failed("debian", name, f"not in {w.sources.debian.suite}'s Sources", seed)
        return _row(w, pkg, seed)

    return walk("debian", w, names(), look)


def _row(w: Walk, pkg: SourcePackage, seed: str) -> Row:
    released, unknown = _released(w, pkg)
    row = Row(
        registry="debian",
        name=pkg.name,
        version=pkg.version,
        source=f"debian:{pkg.name}={pkg.version}",
        released=released,
        language=pkg.language,
        seed=seed,
        sections=sections(pkg),
        debian_bytes=pkg.size,
    )
    outside = window(released, w.since, unknown)
    if outside is not None:
        return row.model_copy(update={"verdicts": outside})
    programs = pkg.programs
    shipped = ", ".join(f"`{b}` ({s})" for b, s in programs[:3])
    if not programs:
        program = no(
            "no binary in a program section: " + ", ".join(f"{b} ({s})" for b, s in pkg.binaries[:3])
        )
    elif pkg.gui:
        program = no(f"a GUI program: ships {shipped}, builds with {pkg.gui}")
    else:
        missing = _unserved(w, pkg)
        program = no(f"the mirror does not serve {missing}") if missing else yes(f"ships {shipped}")
    verdicts = {"program": program, "function": unchecked(_KIND_NOTE), "feature": unchecked(_KIND_NOTE)}
    return row.model_copy(update={"verdicts": verdicts})


def _unserved(w: Walk, pkg: SourcePackage) -> str | None:
    """The first of the source's files the mirror does not serve (its first byte is asked for):
    an index can list a version whose files the pool lacks, and `build` could not fetch it."""
    base = f"{w.sources.debian.mirror.rstrip('/')}/{pkg.directory}"
    for name in pkg.files:
        if ".debian.tar." in name:
            continue  # read for the release date already
        try:
            w.client.get(f"{base}/{name}", headers={"Range": "bytes=0-0"})
        except SourceUnavailable:
            return name
    return None


def _released(w: Walk, pkg: SourcePackage) -> tuple[datetime | None, str]:
    """The top debian/changelog entry's date, or None and why it is not known."""
    debian_tar = next((f for f in pkg.files if ".debian.tar." in f), None)
    if debian_tar is None:
        return None, "a native package (its changelog is inside the full tarball: not fetched)"
    url = f"{w.sources.debian.mirror.rstrip('/')}/{pkg.directory}/{debian_tar}"
    data = w.client.get(url)
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            member = tar.extractfile("debian/changelog")
            text = member.read(64 * 1024).decode("utf-8", "replace") if member else ""
    except (tarfile.TarError, KeyError) as exc:
        raise SourceError(f"{url}: no debian/changelog ({exc})") from exc
    match = _TRAILER.search(text)
    if not match:
        return None, "debian/changelog has no dated entry"
    stamp = parsedate_to_datetime(match["date"].strip())
    return stamp.astimezone(UTC), ""
