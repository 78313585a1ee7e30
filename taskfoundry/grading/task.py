"""evaluate_task: compile one submission, then run every branch of the task's hidden suite."""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

import docker
from docker.errors import APIError

from taskfoundry.errors import ConfigError, SandboxError
from taskfoundry.grading.branch import run_branch
from taskfoundry.grading.compile import compile_submission, read_submission
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.gold import GoldRef, load_gold
from taskfoundry.grading.grade import inject_not_run
from taskfoundry.grading.models import EvaluationResult, TaskImageMissing
from taskfoundry.grading.records import EvalStepError
from taskfoundry.grading.sandbox import GradingSandbox
from taskfoundry.grading.steps import StepRunner
from taskfoundry.images.build import image_exists
from taskfoundry.models import TaskYaml, TestsJson, load_json_model, load_yaml_model

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskSpec:
    """A task directory, loaded: task.yaml, tests.json and the branch tarballs."""

    task_dir: Path
    task: TaskYaml
    tests: TestsJson

    @property
    def task_id(self) -> str:
        return self.task.task_id

    @property
    def branches(self) -> list[str]:
        """Keys of the branches that count (not ignored), in a stable order."""
        return self.tests.counted()

    def expected(self, branch: str) -> list[str]:
        return list(self.tests.branches[branch].tests)

    def known(self, branch: str) -> set[str]:
        b = self.tests.branches[branch]
        return set(b.tests) | {t.name for t in b.ignored_tests}

    def suite(self, branch: str) -> Path:
        return self.task_dir / "tests" / f"{branch}.tar.gz"


def load_task(task_dir: Path) -> TaskSpec:
    """ConfigError when a file is missing or malformed."""
    task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    tests = load_json_model(task_dir / "tests.json", TestsJson)
    if task.task_id != task_dir.name:  # the id names files in the run directory
        raise ConfigError(f"{task_dir}: task_id {task.task_id!r} is not the directory's name")
    return TaskSpec(task_dir=task_dir, task=task, tests=tests)


def evaluate_task(
    spec: TaskSpec,
    submission: Path,
    config: EvalConfig,
    client: docker.DockerClient,
    solution_branch: str = "submission",
) -> EvaluationResult:
    """Grade `submission` against `spec`. A verdict on the submission is an `error_code` or
    failing tests; a SandboxError (infrastructure) propagates to the caller."""
    result = EvaluationResult(
        task_id=spec.task_id, solution_branch=solution_branch, test_branches=spec.branches
    )
    gold = GoldRef(spec.task.eval_clean_hashes)
    if submission.is_file():  # without one there is nothing to run, and no image to ask for
        require_image(client, spec.task.images.task_cleanroom)
        gold = load_gold(client, spec.task)
        result.warnings += gold.notes
    with tempfile.TemporaryDirectory(prefix="tf-eval-") as tmp:
        archive = Path(tmp) / "workspace.tar"
        try:
            result.executable_hash = _compile(spec, submission, config, client, result, archive, gold)
        except EvalStepError as exc:
            _fail(result, spec, exc)
            return result
        for branch in spec.branches:
            _branch(spec, branch, archive, config, client, result, gold)
    log.info("%s: %d results, error %s", spec.task_id, len(result.test_results), result.error_code)
    return result


def require_image(client: docker.DockerClient, image: str) -> None:
    """Images are never pulled: a missing one is a task error, not a verdict."""
    try:
        found = image_exists(client, image)
    except APIError as exc:
        raise SandboxError(f"cannot inspect {image}: {exc}") from exc
    if not found:
        raise TaskImageMissing(f"{image} is not on this Docker engine (build the task here first)")


def _compile(
    spec: TaskSpec,
    submission: Path,
    config: EvalConfig,
    client: docker.DockerClient,
    result: EvaluationResult,
    archive: Path,
    gold: GoldRef,
) -> str:
    data = read_submission(submission, config.submission_mb)
    with GradingSandbox(spec.task.images.task_cleanroom, config, client) as box:
        steps = StepRunner(result.log, config)
        return compile_submission(box, steps, data, gold, archive, result.warnings)


def _branch(
    spec: TaskSpec,
    branch: str,
    archive: Path,
    config: EvalConfig,
    client: docker.DockerClient,
    result: EvaluationResult,
    gold: GoldRef,
) -> None:
    suite = spec.suite(branch)
    try:
        if not suite.is_file():
            raise EvalStepError("missing_branch_tarball", f"no {suite}")
        assert result.executable_hash is not None
        run_branch(
            client,
            spec.task.images.task_cleanroom,
            branch,
            suite,
            archive,
            result.executable_hash,
            gold,
            spec.expected(branch),
            spec.known(branch),
            result,
            config,
        )
    except EvalStepError as exc:
        log.warning("%s branch %s: %s", spec.task_id, branch, exc)
        result.add_branch_error(branch, exc.error_code, exc.error_details)
        inject_not_run(result, branch, spec.expected(branch), exc.error_code)


def _fail(result: EvaluationResult, spec: TaskSpec, exc: EvalStepError) -> None:
    log.info("%s: %s", spec.task_id, exc)
    result.error_code = exc.error_code
    result.error_details = exc.error_details
    for branch in spec.branches:
        inject_not_run(result, branch, spec.expected(branch), exc.error_code)
