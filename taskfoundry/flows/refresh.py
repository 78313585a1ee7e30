"""Refresh: find candidates (catalog + configured sources), skip what is built, build the rest.

With no catalog and no configured sources, discovery finds the candidates: what the
registries released since the last refresh, or within `discover.window_days`.

A candidate is resolved first (a registry source fetches its newest version), so
"already built" means: `<out>/tasks/<task id>/task.yaml` exists with the same
commit. Served by `taskfoundry serve` on the cron schedule of `orchestration.refresh`.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from prefect import flow, task

from taskfoundry import atomic, progress
from taskfoundry.config import Config
from taskfoundry.discover.run import discover, write_catalog
from taskfoundry.errors import ConfigError, StageError, TaskfoundryError
from taskfoundry.flows import names
from taskfoundry.flows.build import build_resolved_flow
from taskfoundry.flows.catalog import CatalogEntry, candidates, release_date
from taskfoundry.flows.many import built_row, failed_row, run_batch
from taskfoundry.flows.summary import RunRow, RunSummary
from taskfoundry.models import TaskYaml, load_yaml_model
from taskfoundry.naming import TaskNames
from taskfoundry.pipeline.results import SourceResult
from taskfoundry.pipeline.source import source_stage
from taskfoundry.store import Store

log = logging.getLogger(__name__)


def already_built(src: SourceResult, config: Config) -> Path | None:
    """The task directory built from this very commit, if there is one."""
    task_dir = TaskNames.of(src, config.namespace, config.out).task_dir
    if config.store is not None and Store.at(config.store).fetch_task(task_dir.name, task_dir.parent) is None:
        return None  # what the store holds counts, not this worker's folder
    try:
        task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    except ConfigError:
        return None
    return task_dir if task.commit == src.commit else None


def _resolve(source: str, config: Config) -> SourceResult:
    try:
        return source_stage(source, config.sources, config.work_dir)
    except TaskfoundryError as exc:
        raise StageError.wrap("source", exc) from exc


@task(name="refresh-source", task_run_name="refresh {item.source}")
def refresh_one(item: CatalogEntry, config: Config) -> RunRow:
    """Resolve, skip if built at this commit, else build: one candidate's row, whatever happens."""
    start = time.monotonic()
    run_config = item.apply(config)
    try:
        src = _resolve(item.source, run_config)
        released = release_date(item, src.path)
        existing = already_built(src, run_config)
        if existing is not None:
            progress.source_done(item.source, True, "already built")
            row = built_row(item.source, [existing], time.monotonic() - start)
            return row.model_copy(update={"status": "skipped", "released_at": released})
        task_dirs = build_resolved_flow(src, run_config)
    except Exception as exc:  # noqa: BLE001 - one failed candidate must not end the refresh
        return failed_row(item.source, exc, start)
    progress.source_done(item.source, True, "built")
    row = built_row(item.source, task_dirs, time.monotonic() - start)
    return row.model_copy(update={"released_at": released})


def _stamp(config: Config) -> Path:
    return config.work_dir / "discover" / "last-refresh"


def last_refresh(config: Config) -> datetime | None:
    """When the last refresh of this output folder started, if one finished."""
    try:
        return datetime.fromisoformat(_stamp(config).read_text().strip())
    except (OSError, ValueError):
        return None


def choose_catalog(
    config: Config, catalog: Path | None, now: datetime | None = None
) -> tuple[Path | None, str]:
    """The catalog a refresh reads, and a line saying where it came from.

    A given or configured catalog (or configured sources) wins; else discovery writes one,
    for the days since the last refresh or, with none, the last `discover.window_days`.
    """
    configured = config.orchestration.refresh
    if catalog or configured.catalog:
        return catalog, f"catalog {catalog or configured.catalog}"
    if configured.sources:
        return None, "the sources in orchestration.refresh.sources"
    now = now or datetime.now(UTC)
    last = last_refresh(config)
    days = config.discover.window_days
    since, why = (
        (last.date(), f"since the last refresh ({last:%Y-%m-%d %H:%M})")
        if last
        else ((now - timedelta(days=days)).date(), f"in a {days}-day window (no earlier refresh)")
    )
    found = discover(
        since, config.discover, config.sources, config.sources.cache(config.work_dir), config.kind
    )
    path = config.work_dir / "discover" / f"catalog-{now:%Y%m%dT%H%M%S}.yaml"
    count = write_catalog(found, path)
    atomic.write_text(path.with_suffix(".json"), found.model_dump_json(indent=2))  # every row, with reasons
    return path, f"discovery: {count} candidates released {why}, since {since}: {path}"


@flow(name="refresh", flow_run_name=names.refresh_name, log_prints=False)
def refresh_flow(config: Config, catalog: Path | None = None, chosen: bool = False) -> RunSummary:
    """Build the new candidates of `catalog` (default: `orchestration.refresh.catalog`, else
    discovery's; `chosen`: the caller has already chosen, see `choose_catalog`)."""
    started = datetime.now(UTC)
    if not chosen:
        catalog, note = choose_catalog(config, catalog, started)
        log.info("refresh: %s", note)
    entries = candidates(config, catalog)
    log.info("refresh: %d candidates", len(entries))
    summary = run_batch("refresh", refresh_one, entries, [e.source for e in entries], config)
    atomic.write_text(_stamp(config), started.isoformat() + "\n")
    return summary
