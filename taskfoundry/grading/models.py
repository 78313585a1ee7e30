"""Versioned models of what the evaluator writes: `<task id>.eval.json` and `summary.json`.

`EvaluationResult` carries ProgramBench's result fields (test_results, error_code,
error_details, log, solution_branch, test_branches, test_branch_errors,
executable_hash, warnings) plus `schema_version` and `task_id`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from taskfoundry.errors import TaskfoundryError
from taskfoundry.grading.records import LogStep

EVAL_SCHEMA_VERSION = 1
Status = Literal["passed", "skipped", "failure", "error", "system_error", "not_run"]


class TaskImageMissing(TaskfoundryError):
    """The task's cleanroom image is not on this engine (it is never pulled)."""


class TestResult(BaseModel):
    __test__ = False  # not a pytest class, despite the name
    model_config = ConfigDict(extra="forbid")

    name: str
    branch: str = ""
    status: Status
    extra: dict[str, Any] = Field(default_factory=dict)


class TestBranchError(BaseModel):
    __test__ = False
    model_config = ConfigDict(extra="forbid")

    error_code: str
    error_details: str = ""


class EvaluationResult(BaseModel):
    """All tests of every branch, ignored ones included; scores use the `tests` lists."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = EVAL_SCHEMA_VERSION
    task_id: str = ""
    test_results: list[TestResult] = Field(default_factory=list)
    error_code: str | None = None
    error_details: str | None = None
    log: list[LogStep] = Field(default_factory=list)
    solution_branch: str | None = None
    test_branches: list[str] = Field(default_factory=list)
    test_branch_errors: dict[str, list[TestBranchError]] = Field(default_factory=dict)
    executable_hash: str | None = None
    warnings: list[str] = Field(default_factory=list)

    def add_branch_error(self, branch: str, code: str, details: str = "") -> None:
        self.test_branch_errors.setdefault(branch, []).append(
            TestBranchError(error_code=code, error_details=details)
        )

    def status_of(self, branch: str, name: str) -> Status:
        """The worst status recorded for one test ("not_run" when it has none)."""
        found = [t.status for t in self.test_results if t.branch == branch and t.name == name]
        if not found:
            return "not_run"
        return "passed" if all(s == "passed" for s in found) else next(s for s in found if s != "passed")


class TaskScore(BaseModel):
    """One task's line in the summary: the pass rate over its non-ignored tests."""

    task_id: str
    tests: int
    passed: int
    pass_rate: float
    resolved: bool
    near_resolved: bool
    error_code: str | None = None
    infra_error: bool = Field(False, description="the sandbox failed: not a verdict, re-run it")
    tier: str = Field(
        "none", description="diagnostic tier of the pass rate: all, most (>= 90%), half, some, none"
    )


class EvalSummary(BaseModel):
    schema_version: int = EVAL_SCHEMA_VERSION
    run_dir: str
    tasks_dir: str
    tasks: list[TaskScore] = Field(default_factory=list)
    mean_pass_rate: float = 0.0
    resolved_rate: float = 0.0
    near_resolved_rate: float = 0.0
    tiers: dict[str, int] = Field(default_factory=dict, description="tasks per diagnostic tier")
    warnings: list[str] = Field(default_factory=list)
