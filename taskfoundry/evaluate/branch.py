"""One branch of the hidden suite, in a fresh container holding the compiled workspace."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import docker

from taskfoundry.evaluate import scripts
from taskfoundry.evaluate.compile import install_helper, remove_hashed
from taskfoundry.evaluate.config import EvalConfig
from taskfoundry.evaluate.grade import grade_branch
from taskfoundry.evaluate.models import EvalStepError, EvaluationResult
from taskfoundry.evaluate.sandbox import WS, EvalSandbox, TooLarge
from taskfoundry.evaluate.steps import Outcome, StepRunner

log = logging.getLogger(__name__)
RESULTS = f"{WS}/eval/results.xml"


def run_branch(
    client: docker.DockerClient,
    image: str,
    branch: str,
    suite: Path,
    archive: Path,
    executable_hash: str,
    gold_hashes: list[str],
    expected: list[str],
    known: set[str],
    result: EvaluationResult,
    config: EvalConfig,
) -> None:
    """Run `suite` (tests/<branch>.tar.gz) against the workspace tar `archive`; grade it."""
    steps = StepRunner(result, config, branch=branch)
    # room for the whole compiled workspace plus the suite and its report
    with EvalSandbox(image, config, client, config.workspace_mb + config.test_room_mb) as box:
        install_helper(box)
        _copy_in(box, steps, "copy_workspace", archive)
        remove_hashed(box, steps, gold_hashes)
        _verify_executable(box, steps, executable_hash)
        steps.run(box, "remove_pytest_steering", scripts.scrub_cmd(), root=True)
        _copy_in(box, steps, "copy_tests", suite)
        steps.run(box, "own_tests", f"chown -R {config.user} eval", root=True)
        run = steps.run_untrusted(
            box,
            "run_tests",
            scripts.run_tests_cmd(config.pytest_workers),
            scripts.TESTS_LOG,
            config.test_timeout,
            env={"HOME": config.home, **scripts.TEST_ENV},
        )
        xml = _read_results(box, steps, run)
    grade_branch(result, branch, expected, known, run, xml)


def _copy_in(box: EvalSandbox, steps: StepRunner, step: str, tarball: Path) -> None:
    """A tar (or tar.gz: the engine unpacks both) into the workspace."""
    start = time.monotonic()
    with tarball.open("rb") as data:
        box.put_archive_stream(WS, data)
    steps.record(step, f"put_archive {tarball.name} -> {WS}", start, f"{tarball.stat().st_size} bytes", 0)


def _verify_executable(box: EvalSandbox, steps: StepRunner, expected: str) -> None:
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


def _read_results(box: EvalSandbox, steps: StepRunner, run: Outcome) -> bytes | None:
    """eval/results.xml from the frozen container; None when there is none to read."""
    start = time.monotonic()
    try:
        xml = box.read_file(RESULTS, steps.config.results_mb * 1024 * 1024)
    except FileNotFoundError:
        steps.record("results_read", f"read {RESULTS}", start, "no results.xml", 1)
        return None
    except TooLarge as exc:
        steps.record("results_read", f"read {RESULTS}", start, str(exc), 1)
        return None
    steps.record("results_read", f"read {RESULTS}", start, xml.decode(errors="replace"), 0)
    return xml
