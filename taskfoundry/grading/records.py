"""What a harness step records, and the error that is a verdict on what was run."""

from __future__ import annotations

from pydantic import BaseModel

from taskfoundry.errors import TaskfoundryError


class EvalStepError(TaskfoundryError):
    """A step failed in a way that is a verdict on the submission (not infrastructure)."""

    def __init__(self, error_code: str, error_details: str = "") -> None:
        self.error_code = error_code
        self.error_details = error_details
        super().__init__(f"{error_code}: {error_details[:200]}")


class LogStep(BaseModel):
    """One command the harness ran (ProgramBench's log entry, with a few more fields)."""

    step: str
    command: str
    wall_time: float
    output: str
    returncode: int
    branch: str | None = None
    timed_out: bool = False
    truncated: bool = False
