"""A batch run's record: one row per source (built, failed, skipped), and its failure budget."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from taskfoundry.errors import StageError, TaskfoundryError
from taskfoundry.models import SCHEMA_VERSION

Status = Literal["built", "failed", "skipped", "cancelled"]


class RunRow(BaseModel):
    """One source in a batch. `failed` carries the stage, the message and the log to read."""

    source: str
    status: Status
    task_id: str | None = None
    task_dir: Path | None = None
    tasks: int = Field(1, description="task directories the source gave (program kind: 1)")
    commit: str | None = None
    tests_kept: int | None = None
    below_gate: int = Field(
        0, description="of its tasks, those below their acceptance gate (task.yaml's grade)"
    )
    line_rate: float | None = None
    seconds: float = 0.0
    cached_stages: list[str] = Field(default_factory=list)
    stage: str | None = Field(None, description="the stage that failed")
    error: str | None = None
    log: Path | None = None
    released_at: datetime | None = Field(None, description="upstream release date, where known")

    @classmethod
    def failure(cls, source: str, exc: BaseException, seconds: float) -> RunRow:
        stage = exc.stage if isinstance(exc, StageError) else None
        log = exc.log if isinstance(exc, TaskfoundryError) else None
        message = exc.message if isinstance(exc, TaskfoundryError) else f"{type(exc).__name__}: {exc}"
        return cls(
            source=source, status="failed", stage=stage, error=message, log=log, seconds=round(seconds, 2)
        )


class RunSummary(BaseModel):
    """What build-many and refresh return, publish and write to `<out>/runs/<name>.json`."""

    schema_version: int = SCHEMA_VERSION
    flow: str
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    seconds: float = 0.0
    rows: list[RunRow] = Field(default_factory=list)
    max_failures: float | None = None
    budget_exceeded: bool = False

    def count(self, status: Status) -> int:
        return sum(row.status == status for row in self.rows)

    def gate_text(self) -> str:
        """How many built tasks are benchmark-grade, when some are not: a refresh that built 10
        tasks of which 7 are below the gate has added 3 to the benchmark."""
        built = [r for r in self.rows if r.status == "built"]
        below = sum(r.below_gate for r in built)
        if not below:
            return ""
        grade = sum(r.tasks for r in built) - below
        return f"; {grade} benchmark-grade tasks, {below} below the acceptance gate"

    @property
    def ok(self) -> bool:
        return not self.budget_exceeded and self.count("failed") == 0 and self.count("cancelled") == 0


def failure_limit(max_failures: float | None, total: int) -> float:
    """How many failures a batch of `total` tolerates: a fraction (< 1) or a count (>= 1)."""
    if max_failures is None:
        return float("inf")
    return max_failures * total if max_failures < 1 else max_failures


def over_budget(failures: int, max_failures: float | None, total: int) -> bool:
    return failures > failure_limit(max_failures, total)


class FailureBudgetExceeded(TaskfoundryError):
    """More sources failed than the budget allows; carries the run's summary."""

    def __init__(self, summary: RunSummary) -> None:
        self.summary = summary
        failed = summary.count("failed")
        super().__init__(
            f"failure budget exceeded: {failed} of {len(summary.rows)} sources failed "
            f"(--max-failures {summary.max_failures}); "
            f"{summary.count('cancelled')} not started"
        )
