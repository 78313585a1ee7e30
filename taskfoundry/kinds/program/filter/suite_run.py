"""Run a branch's suite for the filter, through the grading harness the evaluator uses.

The workspace is the cleanroom's own (what a worker starts from) with `./executable`
the gold or a dummy: the filter grades the reference the way the evaluator grades a
submission, so a test it keeps is graded the same way later.
"""

from __future__ import annotations

import io
import logging
import tarfile
from typing import Any

import docker
from tenacity import retry, retry_if_exception_type, stop_after_attempt

from taskfoundry.errors import SandboxError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.junit import ReportError, TestOutcome, parse_junit, read_report
from taskfoundry.grading.records import LogStep
from taskfoundry.grading.rounds import Rounds
from taskfoundry.grading.rounds import run_rounds as harness_run_rounds
from taskfoundry.grading.sandbox import GradingSandbox
from taskfoundry.grading.steps import StepRunner
from taskfoundry.grading.suite import copy_in
from taskfoundry.grading.suite import run_suite as harness_run_suite
from taskfoundry.images.build import read_image_path
from taskfoundry.layout import WORKSPACE

__all__ = ["TestOutcome", "cleanroom_workspace", "parse_junit", "run_rounds", "run_suite", "with_executable"]
log = logging.getLogger(__name__)


def cleanroom_workspace(client: docker.DockerClient, image: str) -> bytes:
    """The image's /workspace as a tar with workspace-relative names (read without running it)."""
    raw = read_image_path(client, image, f"{WORKSPACE}/.")
    if raw is None:
        raise SandboxError(f"{image} has no {WORKSPACE}")
    return raw


def with_executable(workspace: bytes, executable: bytes | None) -> bytes:
    """`workspace` with `./executable` replaced by `executable` (None: keep the gold)."""
    if executable is None:
        return workspace
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(workspace)) as src, tarfile.open(fileobj=out, mode="w") as dst:
        for member in src.getmembers():
            if member.name.removeprefix("./") != "executable":
                dst.addfile(member, src.extractfile(member) if member.isfile() else None)
        info = tarfile.TarInfo("executable")
        info.size, info.mode = len(executable), 0o755
        dst.addfile(info, io.BytesIO(executable))
    return out.getvalue()


def run_suite(
    client: docker.DockerClient, image: str, suite: bytes, workspace: bytes, config: EvalConfig
) -> dict[str, TestOutcome]:
    """JUnit `classname.name` -> outcome. `suite`: the branch tarball's bytes; `workspace`: a
    tar (see `cleanroom_workspace`). Infrastructure failures are retried, then raised."""
    return _retrying(config, "suite run")(_run_once)(client, image, suite, workspace, config)


def _retrying(config: EvalConfig, what: str) -> Any:
    """Infrastructure failures (SandboxError) retried `config.attempts` times, then raised."""
    return retry(
        stop=stop_after_attempt(max(config.attempts, 1)),
        retry=retry_if_exception_type(SandboxError),
        reraise=True,
        before_sleep=lambda state: log.warning("%s failed (attempt %d)", what, state.attempt_number),
    )


def run_rounds(
    client: docker.DockerClient,
    image: str,
    suite: bytes,
    workspace: bytes,
    config: EvalConfig,
    programs: list[bytes | None],
    part: tuple[int, int],
) -> Rounds:
    """The suite against each of `programs` in one container and one pytest session (see
    `grading.rounds`); infrastructure failures are retried, then raised."""

    def once() -> Rounds:
        steps = StepRunner(list[LogStep](), config)
        with GradingSandbox(image, config, client) as box:
            copy_in(box, steps, "copy_workspace", workspace)
            return harness_run_rounds(box, steps, suite, programs, part)

    return _retrying(config, "suite rounds")(once)()


def _run_once(
    client: docker.DockerClient, image: str, suite: bytes, workspace: bytes, config: EvalConfig
) -> dict[str, TestOutcome]:
    steps = StepRunner(list[LogStep](), config)
    with GradingSandbox(image, config, client) as box:
        copy_in(box, steps, "copy_workspace", workspace)
        ran = harness_run_suite(box, steps, suite)
    try:
        return read_report(ran.run, ran.xml).outcomes
    except ReportError as exc:  # the reference's own run: no report is infrastructure, not a verdict
        raise SandboxError(f"suite run unusable ({exc.code}): {exc.details[-1500:]}") from exc
