"""Crates with a binary target, dated by the sparse index's `pubtime`.

The sparse index answers per name but cannot list names, so the seed is Debian's `rust-*`
source packages (debcargo names each after its crate), those shipping a program first.
A binary target is read from the `.crate` itself: `[[bin]]` in Cargo.toml, `src/main.rs`
or `src/bin/`, as cargo's auto-discovery finds them.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import tomllib
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from taskfoundry.discover.debindex import SourcePackage, recent_first
from taskfoundry.discover.models import RegistryReport, Row, Verdict, no, yes
from taskfoundry.discover.walk import Walk, from_origin, utc, walk, window
from taskfoundry.errors import SourceError, SourceUnavailable
from taskfoundry.sources.crates import download_url, fits, index_path

_SEMVER_SUFFIX = re.compile(r"-\d+(\.\d+)*$")  # rust-clap-2: an older major kept beside rust-clap
_NOT_RUST = {
    "function": no("the function kind takes Python sources"),
    "feature": no("the feature kind grades with the repository's pytest suite"),
}


def seed(w: Walk, origin: dict[str, SourcePackage]) -> Iterator[tuple[str, str]]:
    """(name, why) in walk order; `origin` learns the Debian package each name came from."""
    yield from ((n, "configured seed") for n in w.seeds)
    rust = [p for p in w.debian() if p.name.startswith("rust-")]
    names = {p.name for p in rust}
    current = [
        p for p in rust if not (_SEMVER_SUFFIX.search(p.name) and _SEMVER_SUFFIX.sub("", p.name) in names)
    ]
    for pkg in sorted(recent_first(current), key=lambda p: (not p.fresh, not p.programs)):  # stable
        why = "Debian ships its program" if pkg.programs else "Debian packages the crate"
        origin[pkg.name.removeprefix("rust-")] = pkg
        yield pkg.name.removeprefix("rust-"), f"{pkg.name}: {why}" + ("; a fresh upload" if pkg.fresh else "")


def discover(w: Walk) -> RegistryReport:
    index = w.sources.crates.index.rstrip("/")
    dl: list[str] = []
    origin: dict[str, SourcePackage] = {}

    def look(name: str, why: str) -> Row:
        releases, spelling = _releases(w, index, name)
        if not dl:
            dl.append(str(w.client.json(f"{index}/config.json")["dl"]))
        row = _row(w, dl[0], spelling, releases, why)
        return row.model_copy(update=from_origin(origin.get(name)))

    return walk("crates", w, seed(w, origin), look)


def _releases(w: Walk, index: str, name: str) -> tuple[list[dict[str, Any]], str]:
    """The index entries of `name`, trying `_` for `-` (Debian spells crates with dashes)."""
    tried = [name] + ([name.replace("-", "_")] if "-" in name else [])
    for spelling in tried:
        try:
            text = w.client.get(f"{index}/{index_path(spelling)}")
        except SourceUnavailable:
            continue
        return [json.loads(line) for line in text.splitlines() if line.strip()], spelling
    raise SourceUnavailable(f"crate {name}: not in the index (tried {', '.join(tried)})")


def _row(w: Walk, dl: str, name: str, releases: list[dict[str, Any]], why: str) -> Row:
    dated = [r for r in releases if r.get("pubtime") and not r.get("yanked")]
    rel = max(dated, key=lambda r: r["pubtime"]) if dated else (releases[-1] if releases else None)
    if rel is None:
        raise SourceUnavailable(f"crate {name}: no releases")
    released = utc(rel["pubtime"]) if rel.get("pubtime") else None
    row = Row(
        registry="crates",
        name=rel["name"],
        version=rel["vers"],
        source=f"crate:{rel['name']}@{rel['vers']}",
        released=released,
        language="rust",
        seed=why,
    )
    outside = window(released, w.since, "the index has no pubtime for it (published before 2025)")
    if outside is not None:
        return row.model_copy(update={"verdicts": outside})
    program, bins = _program(w, dl, rel)
    return row.model_copy(
        update={
            "verdicts": {"program": program, **_NOT_RUST},
            "executable": bins[0] if len(bins) == 1 else None,
        }
    )


def _program(w: Walk, dl: str, rel: dict[str, Any]) -> tuple[Verdict, list[str]]:
    have = w.sources.crates.max_rust_version
    if not fits(rel.get("rust_version"), have):
        return no(f"needs rustc {rel['rust_version']}; the build image has {have}"), []
    data = w.client.get(download_url(dl, rel["name"], rel["vers"], rel["cksum"]))
    bins = binary_targets(data, rel["name"])
    if bins:
        return yes("binary target " + ", ".join(f"`{b}`" for b in bins[:3])), bins
    return no("library only: no [[bin]], src/main.rs or src/bin/"), []


def binary_targets(crate: bytes, name: str) -> list[str]:
    """The binaries cargo would build from this `.crate` (explicit `[[bin]]` first)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(crate), mode="r:gz") as tar:
            paths = [PurePosixPath(*PurePosixPath(m.name).parts[1:]) for m in tar.getmembers()]
            manifest = next(
                (m for m in tar.getmembers() if PurePosixPath(m.name).parts[1:] == ("Cargo.toml",)), None
            )
            handle = tar.extractfile(manifest) if manifest else None
            cargo = tomllib.loads(handle.read().decode()) if handle else {}
    except (tarfile.TarError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(f"{name}.crate: unreadable ({exc})") from exc
    bins = [str(b.get("name", name)) for b in cargo.get("bin", [])]
    if cargo.get("package", {}).get("autobins") is False:
        return bins
    if PurePosixPath("src/main.rs") in paths:
        bins.append(str(cargo.get("package", {}).get("name", name)))
    for p in paths:
        if p.parts[:2] == ("src", "bin") and (
            p.suffix == ".rs" and len(p.parts) == 3 or p.name == "main.rs" and len(p.parts) == 4
        ):
            bins.append(p.stem if len(p.parts) == 3 else p.parts[2])
    return list(dict.fromkeys(bins))
