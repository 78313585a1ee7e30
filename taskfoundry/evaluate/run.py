"""evaluate_run: every task of a tasks directory against the submissions of a run directory.

RUN_DIR/<task id>/submission.tar.gz in, RUN_DIR/<task id>/<task id>.eval.json and
RUN_DIR/summary.json out. Each task is caught at its own boundary: a bad task is an
error record in the summary, never a crashed run.
"""

from __future__ import annotations

import logging
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker
from tenacity import retry, retry_if_exception_type, stop_after_attempt

from taskfoundry.errors import ConfigError, SandboxError, TaskfoundryError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvalSummary, EvaluationResult, TaskImageMissing, TaskScore
from taskfoundry.grading.summary import score_task, summarize
from taskfoundry.kinds.base import make_kind
from taskfoundry.models import TaskHead, TestsJson, load_json_model, load_yaml_model, save_json
from taskfoundry.naming import eval_path
from taskfoundry.sandbox.docker import docker_client

log = logging.getLogger(__name__)
SUBMISSION = "submission.tar.gz"


def find_tasks(tasks_dir: Path) -> list[Path]:
    """Task directories: those holding a task.yaml and a tests.json."""
    if not tasks_dir.is_dir():
        raise TaskfoundryError(f"no tasks directory at {tasks_dir}")
    return sorted(
        p for p in tasks_dir.iterdir() if (p / "task.yaml").is_file() and (p / "tests.json").is_file()
    )


def evaluate_run(
    run_dir: Path,
    tasks_dir: Path,
    config: EvalConfig,
    client: docker.DockerClient | None = None,
    solution_branch: str | None = None,
) -> EvalSummary:
    """Evaluate every task found, `config.workers` at a time; write and return the summary.
    Without `client`, one is made for the run (DOCKER_HOST or the local socket)."""
    task_dirs = find_tasks(tasks_dir)
    if not run_dir.is_dir():
        raise TaskfoundryError(f"no run directory at {run_dir}")
    _check_run(run_dir, tasks_dir, task_dirs)
    branch = solution_branch or run_dir.resolve().name
    own = client is None
    engine = client or docker_client()
    try:
        with ThreadPoolExecutor(max_workers=max(config.workers, 1)) as pool:
            scores = list(pool.map(lambda d: evaluate_one(d, run_dir, config, engine, branch), task_dirs))
    finally:
        if own:
            engine.close()
    summary = summarize(run_dir, tasks_dir, scores, _stray_submissions(run_dir, scores))
    _keeps_what_it_had(run_dir / "summary.json", summary)
    save_json(run_dir / "summary.json", summary)
    return summary


def _check_run(run_dir: Path, tasks_dir: Path, task_dirs: list[Path]) -> None:
    """A tasks directory with no task, or a run with no submission for any of them, is a
    mistake (a wrong --tasks wrote a summary of nothing over a real one), not an empty run."""
    if not task_dirs:
        raise TaskfoundryError(
            f"no task in {tasks_dir} (a task is a directory with task.yaml and tests.json)"
        )
    if not any((run_dir / d.name / SUBMISSION).is_file() for d in task_dirs):
        raise TaskfoundryError(
            f"no submission in {run_dir} for any of the {len(task_dirs)} tasks in {tasks_dir} "
            f"(expected {run_dir}/<task id>/{SUBMISSION})"
        )


def _keeps_what_it_had(path: Path, summary: EvalSummary) -> None:
    """A summary is never replaced by one that leaves out tasks it had graded."""
    if not path.is_file():
        return
    try:
        before = load_json_model(path, EvalSummary)
    except ConfigError:  # unreadable: nothing to keep
        return
    lost = sorted({t.task_id for t in before.tasks} - {t.task_id for t in summary.tasks})
    if lost:
        raise TaskfoundryError(
            f"{path} holds {len(lost)} graded tasks this run did not find ({', '.join(lost[:5])}): "
            "not replaced; move it away to start over"
        )


def evaluate_one(
    task_dir: Path, run_dir: Path, config: EvalConfig, client: docker.DockerClient, branch: str
) -> TaskScore:
    """The per-task boundary: whatever happens, one eval.json and one score. The task's kind
    (`kind:` in its task.yaml) grades it."""
    task_id = task_dir.name
    tests: TestsJson | None = None
    try:
        head = load_yaml_model(task_dir / "task.yaml", TaskHead)
        if head.task_id != task_dir.name:  # the id names files in the run directory
            raise ConfigError(f"{task_dir}: task_id {head.task_id!r} is not the directory's name")
        tests = load_json_model(task_dir / "tests.json", TestsJson)
        task_id = head.task_id
        result = _graded(head.kind, task_dir, run_dir / task_id / SUBMISSION, config, client, branch)
    except TaskfoundryError as exc:
        log.warning("%s: %s", task_id, exc)
        code = (
            "sandbox_error"
            if isinstance(exc, SandboxError)
            else "task_image_missing"
            if isinstance(exc, TaskImageMissing)
            else "task_load_error"
        )
        result = EvaluationResult(
            task_id=task_id, solution_branch=branch, error_code=code, error_details=str(exc)
        )
    except Exception as exc:  # noqa: BLE001 - the per-task boundary: a bug is an error record
        log.exception("%s: evaluator error", task_id)
        result = EvaluationResult(
            task_id=task_id,
            solution_branch=branch,
            error_code="internal_error",
            error_details=f"{exc!r}\n{traceback.format_exc()[-3000:]}",
        )
    save_json(eval_path(run_dir, task_id), result)
    expected = tests.expected() if tests else {}
    return score_task(task_id, expected, result, config.near_resolved)


def _graded(
    kind: str,
    task_dir: Path,
    submission: Path,
    config: EvalConfig,
    client: docker.DockerClient,
    branch: str,
) -> EvaluationResult:
    """Infrastructure failures are retried; the last one propagates as SandboxError."""
    grader = make_kind(kind)
    retrying = retry(
        stop=stop_after_attempt(max(config.attempts, 1)),
        retry=retry_if_exception_type(SandboxError),
        reraise=True,
        before_sleep=lambda state: log.warning(
            "%s: sandbox failed (attempt %d)", task_dir.name, state.attempt_number
        ),
    )
    return retrying(grader.grade)(task_dir, submission, config, client, branch)


def _stray_submissions(run_dir: Path, scores: list[TaskScore]) -> list[str]:
    known = {s.task_id for s in scores}
    stray = sorted(
        p.name for p in run_dir.iterdir() if p.is_dir() and (p / SUBMISSION).exists() and p.name not in known
    )
    return [f"submission for unknown task {name}" for name in stray]
