"""Discovery on the real registries: the candidates of each registry for a date a month back.

    .venv/bin/python benchmarks/discover.py [--since 2026-10-27] [--limit 25] [--max-requests 150]
                                            [--suite trixie] [--baseline SUITE] [--cache DIR] [--catalog FILE]
                                            [--per-language N [--yield-catalog FILE]]

Prints counts per registry and kind (rows looked at, error rows, rows released in the window,
candidates per kind), the requests made and the seconds taken, then the first candidates. A
fresh cache folder (the default: a temporary one) makes every answer a real request.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path

from taskfoundry.discover.models import Discovery, RegistryReport, Row
from taskfoundry.discover.run import discover, table, write_catalog
from taskfoundry.discover.settings import DiscoverConfig
from taskfoundry.sources.registry import DebianConfig, SourceConfig

YIELD_LANGUAGES = ("c", "c++", "rust", "go", "python")
# sections of programs a test can drive through arguments, stdin and files; services (net,
# httpd, mail, admin, database, web), hardware (sound, video, hamradio, electronics) and
# screen programs (editors, graphics) are left out
TESTABLE = "text,utils,devel,science,math,misc,vcs,shells"
MAX_DEBIAN_MB = 2.0  # the Debian source package's files: a bound on what one source may cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", type=date.fromisoformat, default=date(2026, 10, 27))
    parser.add_argument("--limit", type=int, default=25)
    parser.add_argument("--max-requests", type=int, default=150)
    parser.add_argument("--registry", default="pypi,crates,debian")
    parser.add_argument("--suite", default=DebianConfig().suite, help="Debian suite (and the seeds' index)")
    parser.add_argument("--baseline", default=None, help="Debian suite whose missing uploads go first")
    parser.add_argument("--cache", type=Path, default=None, help="keep answers here [a fresh temp dir]")
    parser.add_argument("--catalog", type=Path, default=None, help="also write the catalog here")
    parser.add_argument(
        "--per-language",
        type=int,
        default=0,
        help="also list the first N program candidates of each of " + ", ".join(YIELD_LANGUAGES),
    )
    parser.add_argument(
        "--sections", default=TESTABLE, help="the yield list takes programs of these sections"
    )
    parser.add_argument("--max-mb", type=float, default=MAX_DEBIAN_MB, help="of the Debian source's files")
    parser.add_argument("--yield-catalog", type=Path, default=None, help="write that list as a catalog")
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="tf-discover-"))
    config = DiscoverConfig(
        registries=args.registry.split(","),
        limit=args.limit,
        max_requests=args.max_requests,
        debian_baseline=args.baseline,
    )
    sources = SourceConfig(debian=DebianConfig(suite=args.suite))
    start = time.monotonic()
    found = discover(args.since, config, sources, cache)
    seconds = time.monotonic() - start
    print(table(found, first=15))
    total = sum(r.requests for r in found.registries) + found.index_requests
    print(f"\n{total} requests ({found.index_requests} for the Debian index), {seconds:.1f}s, cache {cache}")
    for report in found.registries:
        errors = Counter((r.error or "").split(":")[0] for r in report.rows if r.error)
        langs = Counter(r.language for r in report.rows if r.is_candidate("program"))
        print(f"{report.registry}: errors {dict(errors)}; program candidates by language {dict(langs)}")
    if args.catalog:
        print(f"catalog: {write_catalog(found, args.catalog)} candidates in {args.catalog}")
    if args.per_language:
        picked = yield_list(found, args.per_language, set(args.sections.split(",")), args.max_mb)
        print(f"\nyield list: per language {args.per_language} program candidates, by sha256 of the name")
        for row in picked:
            reason, kb = row.verdicts["program"].reason, (row.debian_bytes or 0) // 1024
            print(f"  {row.language:<7} {row.source:<45} {','.join(row.sections):<12} {kb:>6} KiB {reason}")
        if args.yield_catalog:
            chosen = found.model_copy(update={"registries": [RegistryReport(registry="pypi", rows=picked)]})
            print(
                f"yield catalog: {write_catalog(chosen, args.yield_catalog)} sources in {args.yield_catalog}"
            )


def yield_list(found: Discovery, n: int, testable: set[str], max_mb: float) -> list[Row]:
    """The rule for a yield benchmark: of the program candidates the run found, one per program
    name, those Debian ships as a program (its own binaries, or those of the Debian package that
    seeded the name) in `testable` sections only, from a Debian source of at most `max_mb`;
    per language the first `n` in the order of the sha256 of the name: a sample that neither
    the alphabet nor the walk's order decides. Listed with the languages in turn."""
    seen: set[str] = set()
    picked: dict[str, list[Row]] = {lang: [] for lang in YIELD_LANGUAGES}
    for row in sorted(found.candidates(), key=lambda r: hashlib.sha256(r.name.encode()).hexdigest()):
        key = row.name.lower().removeprefix("rust-").removeprefix("python-")
        bucket = picked.get(row.language or "")
        fits = bool(row.sections) and set(row.sections) <= testable  # Debian ships it as a program
        small = row.debian_bytes is not None and row.debian_bytes <= max_mb * 2**20
        if bucket is not None and len(bucket) < n and key not in seen and fits and small:
            seen.add(key)
            bucket.append(row)
    # languages in turn, so that a yield run stopped part-way has tried each of them
    return [row for group in itertools.zip_longest(*picked.values()) for row in group if row]


if __name__ == "__main__":
    main()
