"""`<out>/index.json`: every task of an output directory with its dates, to cut a version.

`created_at` is when taskfoundry built the task (from its task.yaml); `released_at`
the upstream release date where the source tells it. A benchmark version "as of D"
is the tasks released (or, where that is unknown, created) before D.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.errors import ConfigError
from taskfoundry.flows.summary import RunRow
from taskfoundry.models import SCHEMA_VERSION, TaskYaml, load_json_model, load_yaml_model, save_json

log = logging.getLogger(__name__)
INDEX = "index.json"


class IndexEntry(BaseModel):
    task_id: str
    source: str
    commit: str
    created_at: datetime
    released_at: datetime | None = None
    line_rate: float | None = None
    mutation_score: float | None = None


class BenchmarkIndex(BaseModel):
    schema_version: int = SCHEMA_VERSION
    tasks: dict[str, IndexEntry] = Field(default_factory=dict)


def load_index(out: Path) -> BenchmarkIndex:
    path = out / INDEX
    return load_json_model(path, BenchmarkIndex) if path.exists() else BenchmarkIndex()


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
