"""`<out>/index.json`: every task of an output directory with its dates, to cut a version.

`created_at` is when taskfoundry built the task (from its task.yaml); `released_at`
the upstream release date where the source tells it. A benchmark version "as of D"
is the tasks released (or, where that is unknown, created) before D. The file's models
are in catalog/index.py (the catalog reads them without Prefect); this module writes it.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

from taskfoundry.catalog.index import INDEX, BenchmarkIndex, IndexEntry, load_index
from taskfoundry.errors import ConfigError
from taskfoundry.flows.summary import RunRow
from taskfoundry.models import TaskYaml, load_yaml_model, save_json

log = logging.getLogger(__name__)
__all__ = ["INDEX", "BenchmarkIndex", "IndexEntry", "as_of", "load_index", "record"]


def record(out: Path, rows: list[RunRow] | None = None) -> BenchmarkIndex:
    """Index every task under `<out>/tasks/`; release dates from `rows`, else as known before."""
    index = load_index(out)
    dates = {r.task_id: r.released_at for r in rows or [] if r.task_id and r.released_at}
    fresh = BenchmarkIndex()
    for path in sorted((out / "tasks").glob("*/task.yaml")):
        try:
            task = load_yaml_model(path, TaskYaml)
        except ConfigError as exc:
            log.warning("index: %s", exc)
            continue
        old = index.tasks.get(task.task_id)
        released = dates.get(task.task_id) or (old.released_at if old else None)
        fresh.tasks[task.task_id] = IndexEntry(
            task_id=task.task_id,
            source=task.source,
            commit=task.commit,
            created_at=task.created_at,
            released_at=released,
            line_rate=task.stats.line_rate,
            mutation_score=task.stats.mutation_score,
        )
    save_json(out / INDEX, fresh)
    return fresh


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def as_of(index: BenchmarkIndex, cutoff: datetime) -> list[IndexEntry]:
    """The tasks of a benchmark version cut at `cutoff`, oldest first."""
    cut = _aware(cutoff)
    chosen = [e for e in index.tasks.values() if _aware(e.released_at or e.created_at) < cut]
    return sorted(chosen, key=lambda e: (_aware(e.released_at or e.created_at), e.task_id))
