"""Grading through the catalog: the task kind's grader, scored as `taskfoundry eval` scores.

Where no Docker engine answers, `DockerUnavailable` (a SandboxError) says so before
anything runs: a harness can catch it and skip, as ProgramBench's adapters do.
"""

from __future__ import annotations

import os
from pathlib import Path

import docker
from pydantic import BaseModel

from taskfoundry.catalog.records import TaskRecord
from taskfoundry.errors import ConfigError, DockerUnavailable, SandboxError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.grading.summary import score_task
from taskfoundry.kinds.base import make_kind
from taskfoundry.models import TestsJson, load_json_model, save_json
from taskfoundry.naming import eval_path
from taskfoundry.sandbox.docker import docker_client


class Grade(BaseModel):
    """One submission's verdict on one task: the score, and the evaluator's full result."""

    task_id: str
    passed: int
    total: int
    pass_rate: float
    resolved: bool
    error_code: str | None = None
    error_details: str | None = None
    infra_error: bool = False
    eval_json: str | None = None
    result: EvaluationResult


def engine() -> docker.DockerClient:
    """A client for the engine in reach, or DockerUnavailable naming where it looked."""
    try:
        return docker_client()
    except SandboxError as exc:
        where = os.environ.get("DOCKER_HOST") or "the local socket"
        raise DockerUnavailable(f"Docker is not available at {where}: {exc}") from exc


def _task_dir(record: TaskRecord) -> Path:
    if record.task_dir is None or not record.task_dir.is_dir():
        raise ConfigError(f"{record.task_id}: its task directory {record.path} is not on this machine")
    return record.task_dir


def _grade(record: TaskRecord, result: EvaluationResult, near: float, where: Path | None) -> Grade:
    tests = load_json_model(_task_dir(record) / "tests.json", TestsJson)
    score = score_task(record.task_id, tests.expected(), result, near)
    return Grade(
        task_id=record.task_id,
        passed=score.passed,
        total=score.tests,
        pass_rate=score.pass_rate,
        resolved=score.resolved,
        error_code=result.error_code,
        error_details=result.error_details,
        infra_error=score.infra_error,
        eval_json=str(where) if where else None,
        result=result,
    )


def evaluate_record(
    record: TaskRecord,
    submission: Path,
    config: EvalConfig,
    run_dir: Path | None = None,
    client: docker.DockerClient | None = None,
) -> Grade:
    """Grade `submission` against the task of `record` by its kind's grader (as `taskfoundry
    eval` does); infrastructure failures propagate."""
    task_dir = _task_dir(record)
    if not submission.is_file():
        raise ConfigError(f"no submission tarball at {submission}")
    grader = make_kind(record.kind)
    own = client is None
    engine_client = client or engine()
    try:
        result = grader.grade(task_dir, submission, config, engine_client, "submission")
    finally:
        if own:
            engine_client.close()
    where = eval_path(run_dir, record.task_id) if run_dir else None
    if where:
        save_json(where, result)
    return _grade(record, result, config.near_resolved, where)


def grade_of(record: TaskRecord, eval_json: Path, near: float = EvalConfig().near_resolved) -> Grade:
    """Read an `eval.json` back and score it against the task's tests.json."""
    result = load_json_model(eval_json, EvaluationResult)
    if result.task_id and result.task_id != record.task_id:
        raise ConfigError(f"{eval_json}: the result of {result.task_id}, not of {record.task_id}")
    return _grade(record, result, near, eval_json)
