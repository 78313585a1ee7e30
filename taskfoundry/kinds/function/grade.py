"""grade of the function kind: a submission (a tar.gz holding candidate.py) against the hidden
cases, through the shared harness (`GradingSandbox`, `StepRunner`, `run_suite`, the JUnit
report read as the program kind reads it). The submission is unpacked and parsed (nothing of
it runs) and the suite goes into the same container: pytest runs as root, the candidate as
its own uid. Pass: every case passes."""

from __future__ import annotations

import logging
from pathlib import Path

import docker

from taskfoundry.grading import scripts
from taskfoundry.grading.compile import read_submission
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.grade import grade_branch, inject_not_run
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.grading.records import EvalStepError
from taskfoundry.grading.sandbox import WS, GradingSandbox
from taskfoundry.grading.steps import StepRunner
from taskfoundry.grading.suite import run_suite
from taskfoundry.grading.task import TaskSpec, load_task, require_image
from taskfoundry.kinds.function.package import MODULE
from taskfoundry.sandbox import tarutil

log = logging.getLogger(__name__)
# parses the candidate without running it: a syntax error is the submission's verdict
_PARSE = f"python3 -I -c \"import ast, sys; ast.parse(open('{MODULE}', 'rb').read(), '{MODULE}')\""


def grade_function(
    task_dir: Path, submission: Path, config: EvalConfig, client: docker.DockerClient, solution_branch: str
) -> EvaluationResult:
    spec = load_task(task_dir)
    result = EvaluationResult(
        task_id=spec.task_id, solution_branch=solution_branch, test_branches=spec.branches
    )
    try:
        data = read_submission(submission, config.submission_mb)
        require_image(client, spec.task.images.task_cleanroom)
        for branch in spec.branches:
            _branch(spec, branch, data, config, client, result)
    except EvalStepError as exc:
        result.error_code, result.error_details = exc.error_code, exc.error_details
        for branch in spec.branches:
            inject_not_run(result, branch, spec.expected(branch), exc.error_code)
    return result


def _branch(
    spec: TaskSpec,
    branch: str,
    data: bytes,
    config: EvalConfig,
    client: docker.DockerClient,
    result: EvaluationResult,
) -> None:
    suite = spec.suite(branch)
    if not suite.is_file():
        raise EvalStepError("missing_branch_tarball", f"no {suite}")
    steps = StepRunner(result.log, config, branch=branch)
    with GradingSandbox(spec.task.images.task_cleanroom, config, client) as box:
        uid = int(config.user.split(":")[0])
        parent, name = scripts.SUBMISSION_PATH.rsplit("/", 1)
        box.put_archive_stream(parent, tarutil.tar_file(data, name, 0o644, uid=uid))
        steps.run(box, "extract_submission", scripts.extract_cmd(WS), error_code="bad_submission_archive")
        steps.run(box, "find_candidate", f"test -f ./{MODULE}", error_code="missing_candidate_module")
        steps.run(box, "parse_candidate", _PARSE, error_code="candidate_syntax_error")
        ran = run_suite(box, steps, suite)
    grade_branch(result, branch, spec.expected(branch), spec.known(branch), ran.run, ran.xml)
