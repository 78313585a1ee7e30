"""When a task was made and what its stages cost, kept across a re-run from the cache.

A re-run whose stages all come from the cache writes the same task again: its `created_at`
(which `--as-of` and releases cut on) and its stage times stay those of the run that made it.
A re-run that made any stage again made a new task: created now, the stages it reused keep
the times the earlier task.yaml gave them (a cache hit's own time is a lookup, not the stage).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class StageTimes(BaseModel):
    """One build's stage wall times, and which of its cacheable stages the cache answered."""

    model_config = ConfigDict(frozen=True)

    seconds: dict[str, float] = Field(default_factory=dict)
    reused: tuple[str, ...] = ()
    remade: tuple[str, ...] = Field((), description="cacheable stages this run computed again")


class Provenance(BaseModel):
    model_config = ConfigDict(frozen=True)

    created_at: datetime
    stage_seconds: dict[str, float]
    reused_stages: list[str]


class _Earlier(BaseModel):
    """The parts of an earlier task.yaml (any kind) provenance reads."""

    created_at: datetime
    commit: str
    stats: dict[str, object] = Field(default_factory=dict)


def provenance(task_dir: Path, commit: str, times: StageTimes) -> Provenance:
    """The provenance to write into `task_dir`'s task.yaml, given what is there now."""
    reused = sorted(times.reused)
    ran = _without({k: round(v, 2) for k, v in times.seconds.items()}, reused)
    earlier = _earlier(task_dir, commit)
    if earlier is None:
        return Provenance(created_at=datetime.now(UTC), stage_seconds=ran, reused_stages=reused)
    before = _seconds(earlier)
    if not times.remade:  # nothing made again: the same task, as the earlier run made it
        return Provenance(created_at=earlier.created_at, stage_seconds=before or ran, reused_stages=reused)
    kept = {k: before[k] for k in reused if k in before}
    return Provenance(created_at=datetime.now(UTC), stage_seconds=ran | kept, reused_stages=reused)


def _earlier(task_dir: Path, commit: str) -> _Earlier | None:
    """The task.yaml a run before this one wrote for the same commit, if one is readable."""
    try:
        earlier = _Earlier.model_validate(yaml.safe_load((task_dir / "task.yaml").read_text()))
    except (OSError, yaml.YAMLError, ValidationError):
        return None  # none, or unreadable: this run's task is a new one
    return earlier if earlier.commit == commit else None


def _seconds(earlier: _Earlier) -> dict[str, float]:
    raw = earlier.stats.get("stage_seconds")
    if not isinstance(raw, dict):
        return {}
    return {str(k): float(v) for k, v in raw.items() if isinstance(v, int | float)}


def _without(seconds: dict[str, float], names: list[str]) -> dict[str, float]:
    return {k: v for k, v in seconds.items() if k not in names}
