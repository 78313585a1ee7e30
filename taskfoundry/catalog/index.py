"""`<out>/index.json`'s models: every task of an output folder with its dates, to cut a version.

`created_at` is when taskfoundry built the task (from its task.yaml); `released_at`
the upstream release date where the source tells it. Written by the flows
(`flows.index.record`), read by the catalog and written into releases, so it lives
outside flows/ (the catalog does not need Prefect).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.models import SCHEMA_VERSION, load_json_model

INDEX = "index.json"


class IndexEntry(BaseModel):
    task_id: str
    source: str
    commit: str
    created_at: datetime
    released_at: datetime | None = None
    line_rate: float | None = None
    mutation_score: float | None = None  # task.yaml's stats.mutation_score (None: not analysed)


class BenchmarkIndex(BaseModel):
    schema_version: int = SCHEMA_VERSION
    tasks: dict[str, IndexEntry] = Field(default_factory=dict)


def load_index(out: Path) -> BenchmarkIndex:
    path = out / INDEX
    return load_json_model(path, BenchmarkIndex) if path.exists() else BenchmarkIndex()
