"""Discovery's entry point: each registry walked within its bounds, then the catalog and a table."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

from taskfoundry import atomic
from taskfoundry.discover import crates, debian, pypi
from taskfoundry.discover.http import Client
from taskfoundry.discover.models import KINDS, Discovery, RegistryReport
from taskfoundry.discover.settings import REGISTRIES, DiscoverConfig
from taskfoundry.discover.walk import Walk, shared_index
from taskfoundry.errors import ConfigError
from taskfoundry.sources.registry import SourceConfig

log = logging.getLogger(__name__)

WALKS: dict[str, Callable[[Walk], RegistryReport]] = {
    "pypi": pypi.discover,
    "crates": crates.discover,
    "debian": debian.discover,
}


def discover(
    since: date, config: DiscoverConfig, sources: SourceConfig, cache: Path, kind: str = "program"
) -> Discovery:
    """Candidates released on or after `since` (UTC midnight) in each configured registry."""
    unknown = [r for r in config.registries if r not in WALKS]
    if unknown:
        raise ConfigError(f"unknown registry {', '.join(unknown)} (known: {', '.join(REGISTRIES)})")
    root = cache / "discover" / "http"
    suites = 1 + bool(config.debian_baseline)
    index_client = Client(root, suites * len(sources.debian.components), config.timeout, config.ttl_hours)
    index = shared_index(index_client, sources, config.debian_baseline)
    start = datetime.combine(since, time.min, tzinfo=UTC)
    result = Discovery(since=since, kind=kind, created_at=datetime.now(UTC))
    for registry in config.registries:
        client = Client(root, config.max_requests, config.timeout, config.ttl_hours)
        seeds = config.seeds.get(registry, [])
        walk = Walk(client, start, kind, config.limit, sources, seeds, index)
        report = WALKS[registry](walk)
        log.info("discover %s: %d rows, %d requests", registry, len(report.rows), report.requests)
        result.registries.append(report)
    result.index_requests = index_client.requests
    return result


def catalog_items(discovery: Discovery) -> list[dict[str, Any]]:
    """The candidates as `refresh --catalog` reads them (`flows.catalog.CatalogEntry`)."""
    items = []
    for row in discovery.candidates():
        item: dict[str, Any] = {"source": row.source}
        if row.executable:
            item["executable"] = row.executable
        if row.released:
            item["released_at"] = row.released.isoformat()
        items.append(item)
    return items


def write_catalog(discovery: Discovery, path: Path) -> int:
    """Write the candidates atomically; the number written."""
    items = catalog_items(discovery)
    atomic.write_yaml(path, items)
    return len(items)


def counts(report: RegistryReport, since: date) -> dict[str, int]:
    start = datetime.combine(since, time.min, tzinfo=UTC)
    rows = report.rows
    out = {
        "looked": len(rows),
        "errors": sum(r.error is not None for r in rows),
        "in_window": sum(r.released is not None and r.released >= start for r in rows),
    }
    out.update({kind: sum(r.is_candidate(kind) for r in rows) for kind in KINDS})
    return out


def table(discovery: Discovery, first: int = 10) -> str:
    """Counts per registry and kind, then the first candidates of each registry."""
    head = f"{'registry':<8} {'looked':>6} {'errors':>6} {'window':>6} " + " ".join(f"{k:>8}" for k in KINDS)
    lines = [f"discovery since {discovery.since} (kind: {discovery.kind})", head]
    for report in discovery.registries:
        c = counts(report, discovery.since)
        lines.append(
            f"{report.registry:<8} {c['looked']:>6} {c['errors']:>6} {c['in_window']:>6} "
            + " ".join(f"{c[k]:>8}" for k in KINDS)
            + f"   {report.requests} requests, {report.cached} cached, {report.seconds:.1f}s"
            + f"; {report.stopped}"
        )
    for report in discovery.registries:
        shown = [r for r in report.rows if r.is_candidate(discovery.kind)][:first]
        if shown:
            lines.append(f"\n{report.registry}: first {len(shown)} candidates")
        for row in shown:
            released = f"{row.released:%Y-%m-%d}" if row.released else "-"
            lines.append(f"  {released}  {row.source:<40} {row.verdicts[discovery.kind].reason}")
    return "\n".join(lines)
