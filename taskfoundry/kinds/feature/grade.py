"""Grading a feature submission through the shared harness.

One `GradingSandbox` of the task's start-state image (read-only root, tmpfs workspace, no
network, pids and memory limits). Trusted steps, as root, before any submitted code runs:
the hidden suite (tests/<branch>.tar.gz) into /workspace/eval, the submission unpacked
into /tmp, the workspace composed (`assets/feature_compose.py`: the level-2 base, the
submission, then every test file, conftest and pytest setting restored from the
reference), eval/ sealed (root only), the rest handed to the worker. Then pytest runs as
the worker with the task's test command, the container is frozen, and the JUnit report is
read by the harness (`harness.report.read_report` via `evaluate.grade.grade_branch`).

The tests import the submission in their own process, so the worker's code runs inside
pytest: it cannot read eval/ or replace the tests, conftests or pytest settings, and the
report must agree with pytest's exit code, but it could forge the report from inside the
run (the program kind's uid split cannot hold for in-process tests).
"""

from __future__ import annotations

import io
import logging
import tarfile
from pathlib import Path

import docker

from taskfoundry import atomic
from taskfoundry.evaluate.compile import read_submission
from taskfoundry.evaluate.grade import grade_branch, inject_not_run
from taskfoundry.evaluate.models import EvaluationResult, TaskImageMissing
from taskfoundry.harness.config import EvalConfig
from taskfoundry.harness.models import EvalStepError
from taskfoundry.harness.sandbox import WS, GradingSandbox, TooLarge
from taskfoundry.harness.steps import StepRunner
from taskfoundry.harness.suite import copy_in
from taskfoundry.images.build import image_exists
from taskfoundry.kinds.feature.models import FeatureTaskYaml
from taskfoundry.kinds.feature.runner import RESULTS
from taskfoundry.models import TestsJson, load_json_model, load_yaml_model

log = logging.getLogger(__name__)
SUBMISSION = "/tmp/tf-submission.tar.gz"
UNPACKED = "/tmp/tf-submission"
TEST_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}


def grade_feature(
    task_dir: Path,
    submission: Path,
    config: EvalConfig,
    client: docker.DockerClient,
    solution_branch: str = "submission",
) -> EvaluationResult:
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    tests = load_json_model(task_dir / "tests.json", TestsJson)
    branches = sorted(k for k, b in tests.branches.items() if not b.ignored)
    result = EvaluationResult(task_id=task.task_id, solution_branch=solution_branch, test_branches=branches)
    for branch in branches:
        expected = list(tests.branches[branch].tests)
        try:
            data = read_submission(submission, config.submission_mb)
            if not image_exists(client, task.images.task_cleanroom):  # never pulled: not a verdict
                raise TaskImageMissing(f"{task.images.task_cleanroom} is not on this Docker engine")
            suite = task_dir / "tests" / f"{branch}.tar.gz"
            if not suite.is_file():
                raise EvalStepError("missing_branch_tarball", f"no {suite}")
            _run(task, branch, suite, data, expected, config, client, result)
        except EvalStepError as exc:
            log.info("%s: %s", task.task_id, exc)
            result.error_code, result.error_details = exc.error_code, exc.error_details
            inject_not_run(result, branch, expected, exc.error_code)
    return result


def _run(
    task: FeatureTaskYaml,
    branch: str,
    suite: Path,
    data: bytes,
    expected: list[str],
    config: EvalConfig,
    client: docker.DockerClient,
    result: EvaluationResult,
) -> None:
    steps = StepRunner(result.log, config, branch=branch)
    worker = config.user
    with GradingSandbox(task.images.task_cleanroom, config, client) as box:
        copy_in(box, steps, "copy_tests", suite)
        box.put_file(data, SUBMISSION, mode=0o600)
        steps.run(
            box,
            "extract_submission",
            f"mkdir -p {UNPACKED} && tar -xzf {SUBMISSION} -C {UNPACKED} --no-same-owner "
            f"--no-same-permissions && rm -f {SUBMISSION}",
            root=True,
            error_code="bad_submission_archive",
        )
        steps.run(
            box,
            "compose_workspace",
            f"python3 -I {WS}/eval/compose.py {task.level} {UNPACKED} {WS} && rm -rf {UNPACKED} "
            f"&& chown -R {worker} {WS} && chown -R 0:0 {WS}/eval && chmod -R go-rwx {WS}/eval "
            f"&& rm -f {RESULTS}",
            root=True,
        )
        env = {"HOME": config.home, **TEST_ENV}
        command = f"cd {WS} && {task.test_command}"
        run = steps.run_untrusted(
            box, "run_tests", command, "/tmp/tf-tests.log", config.test_timeout, env=env
        )
        xml = _results(box, config)
    grade_branch(result, branch, expected, set(expected), run, xml)


def _results(box: GradingSandbox, config: EvalConfig) -> bytes | None:
    try:
        return box.read_file(RESULTS, config.results_mb * 1024 * 1024)
    except (FileNotFoundError, TooLarge):
        return None


def start_state_submission(task_dir: Path, client: docker.DockerClient, dest: Path) -> Path:
    """The worker's start state, submitted as it is: /workspace of the task's `:task_cleanroom`
    image (no .git) as a submission tarball. Grading it must not resolve the task."""
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    container = client.containers.create(task.images.task_cleanroom, ["true"], network_disabled=True)
    try:
        chunks, _ = container.get_archive(f"{WS}/.")
        raw = b"".join(chunks)
    finally:
        container.remove(force=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(raw)) as src, tarfile.open(fileobj=buf, mode="w:gz") as out:
        for member in src.getmembers():
            name = member.name.removeprefix("./")
            if not member.isfile() or name.split("/", 1)[0] == ".git":
                continue
            extracted = src.extractfile(member)
            assert extracted is not None
            member.name = name
            out.addfile(member, extracted)
    atomic.write_bytes(dest, buf.getvalue())
    return dest
