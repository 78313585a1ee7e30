"""The walk every registry shares: names in a stated order, one row each, within the bounds."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from taskfoundry.discover.debindex import SourcePackage, load_index
from taskfoundry.discover.http import BudgetSpent, Client
from taskfoundry.discover.models import KINDS, Registry, RegistryReport, Row, Verdict, no
from taskfoundry.errors import SourceError
from taskfoundry.sources.registry import SourceConfig

log = logging.getLogger(__name__)


@dataclass
class Walk:
    """One registry's run: its client (budget and cache), the window, the bounds."""

    client: Client
    since: datetime
    kind: str
    limit: int
    sources: SourceConfig
    seeds: list[str]
    debian: Callable[[], list[SourcePackage]]
    notes: list[str] = field(default_factory=list)


def shared_index(
    client: Client, sources: SourceConfig, baseline: str | None
) -> Callable[[], list[SourcePackage]]:
    """The Debian index, read on first use and then kept (or its failure) for the run's other
    registries: a mirror that failed once is not asked again in the same run."""
    kept: list[list[SourcePackage]] = []
    failed: list[SourceError] = []

    def index() -> list[SourcePackage]:
        if failed:
            raise failed[0]
        if not kept:
            try:
                kept.append(load_index(client, sources.debian, baseline))
            except SourceError as exc:
                failed.append(exc)
                raise
        return kept[0]

    return index


def sections(pkg: SourcePackage | None) -> list[str]:
    return sorted({section for _, section in pkg.programs}) if pkg else []


def from_origin(pkg: SourcePackage | None) -> dict[str, Any]:
    """What a row takes from the Debian source package it was seeded from."""
    return {"sections": sections(pkg), "debian_bytes": pkg.size if pkg else None}


def window(released: datetime | None, since: datetime, unknown: str) -> dict[str, Verdict] | None:
    """Verdicts for a release outside the window (or of unknown date); None: inside it."""
    if released is None:
        return {k: no(f"release date unknown: {unknown}") for k in KINDS}
    if released < since:
        return {k: no(f"released {released:%Y-%m-%d}, before {since:%Y-%m-%d}") for k in KINDS}
    return None


def utc(value: str) -> datetime:
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def walk(
    registry: Registry, w: Walk, names: Iterable[tuple[str, str]], look: Callable[[str, str], Row]
) -> RegistryReport:
    """Look up each (name, seed reason) until `limit` candidates, the budget or the names end."""
    start = time.monotonic()
    report = RegistryReport(registry=registry, stopped="seeds exhausted")
    seen: set[str] = set()
    found = 0
    try:
        for name, seed in names:
            if name in seen:
                continue
            seen.add(name)
            if found >= w.limit:
                report.stopped = f"limit of {w.limit} candidates"
                break
            report.seeds += 1
            try:
                row = look(name, seed)
            except BudgetSpent:
                raise
            except Exception as exc:  # noqa: BLE001 - one bad answer is one error row, not a failed run
                log.info("discover %s %s: %s", registry, name, exc)
                row = Row.failed(registry, name, f"{type(exc).__name__}: {exc}", seed)
            found += row.is_candidate(w.kind)
            report.rows.append(row)
            if found >= w.limit:
                report.stopped = f"limit of {w.limit} candidates"
                break
    except BudgetSpent as exc:
        report.stopped = (
            f"request budget of {w.client.max_requests} spent: answers are cached, so another run "
            "(or a larger --max-requests) goes further and finds more"
        )
        log.info("discover %s: %s", registry, exc)
    except Exception as exc:  # noqa: BLE001 - the seed itself failed: the registry reports it, others go on
        report.stopped = f"seed failed: {type(exc).__name__}: {exc}"
        report.rows.append(Row.failed(registry, "(seed)", report.stopped))
    report.requests = w.client.requests
    report.cached = w.client.cached
    report.seconds = round(time.monotonic() - start, 2)
    return report
