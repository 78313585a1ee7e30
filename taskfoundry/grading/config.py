"""EvalConfig: limits and budgets of the grading harness (filter and evaluator), one field each."""

from __future__ import annotations

from pydantic import BaseModel, Field


class EvalConfig(BaseModel):
    """Every field has a working default; the CLI merges a YAML `eval:` section and flags once."""

    model_config = {"extra": "forbid"}

    compile_timeout: float = Field(900, description="seconds `compile.sh` may run (ProgramBench: 900)")
    test_timeout: float = Field(2400, description="seconds one branch's `eval/run.sh` may run")
    step_timeout: float = Field(120, description="seconds any other step (extract, hash scan) may run")
    pytest_workers: int = Field(2, description="pytest-xdist workers inside each test container")
    workers: int = Field(1, description="tasks evaluated at the same time")
    memory_mb: int = Field(4096, description="memory limit of each container (tmpfs counts against it)")
    cpus: float | None = Field(None, description="CPUs each container may use (None: no limit)")
    pids: int = Field(512, description="process limit of each container (stops fork bombs)")
    workspace_mb: int = Field(1024, description="size of the /workspace tmpfs: caps what a build writes")
    test_room_mb: int = Field(256, description="room a test container's workspace has past the build's")
    tmp_mb: int = Field(512, description="size of the /tmp tmpfs")
    home_mb: int = Field(256, description="size of the worker's home tmpfs")
    home: str = Field("/home/worker", description="the worker's home directory in the task image")
    user: str = Field("1000:1000", description="uid:gid of the non-root worker")
    isolate: bool = Field(
        True,
        description="pytest runs as root (the grader) and each program call as its own uid that "
        "cannot read eval/ (False: everything as the worker, ProgramBench's level)",
    )
    refuse_gold_code: bool = Field(
        True,
        description="a ./executable mapping most of the gold's code pages is `gold_code` and "
        "scores 0 (False only to measure what the check stops)",
    )
    program_uid: int = Field(2000, description="uid of the program under test (+ the xdist worker's number)")
    submission_mb: int = Field(512, description="largest submission tarball accepted (compressed)")
    results_mb: int = Field(64, description="largest JUnit report read back")
    output_bytes: int = Field(8 * 1024 * 1024, description="cap on stdout and stderr of one step")
    log_chars: int = Field(20_000, description="characters of each step's output kept in the log")
    attempts: int = Field(2, description="tries per task when the sandbox itself fails")
    near_resolved: float = Field(0.95, description="pass rate at or above which a task is near-resolved")
