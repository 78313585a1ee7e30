"""What a solve leaves in RUN_DIR/<task id>/ (solve.json) and what `run` reports (report.jsonl)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from taskfoundry.evaluate.run import SUBMISSION

__all__ = ["SUBMISSION", "EndReason", "RunRow", "SolveRecord", "task_run_dir"]

SOLVE_SCHEMA_VERSION = 1
TRAJECTORY = "trajectory.json"
SOLVE_JSON = "solve.json"
RESULT_JSON = "result.json"  # `run`: written last, so its presence means the task is finished
REPORT = "report.jsonl"

EndReason = Literal[
    "done",  # the model submitted, or the command exited 0
    "step_limit",
    "cost_limit",
    "time_limit",
    "model_error",  # the model failed after the SDK's retries
    "agent_error",  # the command exited non-zero
    "sandbox_error",  # the container failed (infrastructure, not a verdict)
]


class SolveRecord(BaseModel):
    """solve.json: how one agent run on one task went."""

    schema_version: int = SOLVE_SCHEMA_VERSION
    task_id: str
    kind: str
    driver: str = Field(description="`provider:model`, or `command`")
    end_reason: EndReason
    error: str | None = None
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    submission_bytes: int = Field(0, description="size of submission.tar.gz (0: none written)")
    started_at: datetime


class RunRow(BaseModel):
    """One line of report.jsonl: a solved and graded task."""

    task: str
    kind: str
    language: str
    difficulty: str
    driver: str
    resolved: bool
    pass_rate: float
    tests: int
    passed: int
    eval_error: str | None = None
    infra_error: bool = Field(False, description="the grader's sandbox failed: re-run, not a verdict")
    steps: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    seconds: float = Field(description="wall-clock seconds of solve and grade")
    end_reason: EndReason


def task_run_dir(run_dir: Path, task_id: str) -> Path:
    return run_dir / task_id
