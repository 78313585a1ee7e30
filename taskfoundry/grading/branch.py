"""One branch of the hidden suite, in a fresh container holding the compiled workspace."""

from __future__ import annotations

import logging
from pathlib import Path

import docker

from taskfoundry.grading.compile import install_helper, remove_hashed
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.gold import GoldRef
from taskfoundry.grading.grade import grade_branch
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.grading.records import EvalStepError
from taskfoundry.grading.sandbox import GradingSandbox
from taskfoundry.grading.steps import StepRunner
from taskfoundry.grading.suite import copy_in, run_suite

log = logging.getLogger(__name__)


def run_branch(
    client: docker.DockerClient,
    image: str,
    branch: str,
    suite: Path,
    archive: Path,
    executable_hash: str,
    gold: GoldRef,
    expected: list[str],
    known: set[str],
    result: EvaluationResult,
    config: EvalConfig,
) -> None:
    """Run `suite` (tests/<branch>.tar.gz) against the workspace tar `archive`; grade it."""
    steps = StepRunner(result.log, config, branch=branch)
    # room for the whole compiled workspace plus the suite and its report
    with GradingSandbox(image, config, client, config.workspace_mb + config.test_room_mb) as box:
        install_helper(box)
        copy_in(box, steps, "copy_workspace", archive)
        remove_hashed(box, steps, gold, result.warnings)
        _verify_executable(box, steps, executable_hash)
        ran = run_suite(box, steps, suite)
    grade_branch(result, branch, expected, known, ran.run, ran.xml)


def _verify_executable(box: GradingSandbox, steps: StepRunner, expected: str) -> None:
    res = steps.run(
        box,
        "verify_executable_hash",
        "chmod a+x ./executable && sha256sum ./executable",
        root=True,
        error_code="executable_missing",
    )
    got = res.stdout.decode(errors="replace").split()[:1]
    if got != [expected]:
        raise EvalStepError("executable_hash_mismatch", f"expected {expected}, got {got}")
