"""run_suite: put a branch's hidden suite into a prepared workspace, run it, read its report.

The one code path by which the filter and the evaluator run a suite. The caller has put
the workspace (a compiled submission, or the cleanroom's workspace with the gold or a
dummy) into a fresh `GradingSandbox`; from here on both are the same: steering files
removed, the suite copied in and sealed (eval/ readable by root only), pytest run as
root with the program dropped to its own uid by tfrun, the container frozen, the
report read.
"""

from __future__ import annotations

import io
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from taskfoundry.grading import scripts
from taskfoundry.grading.sandbox import WS, GradingSandbox, TooLarge
from taskfoundry.grading.steps import Outcome, StepRunner

RESULTS = f"{WS}/eval/results.xml"


@dataclass(frozen=True)
class SuiteRun:
    run: Outcome
    xml: bytes | None


def run_suite(box: GradingSandbox, steps: StepRunner, suite: Path | bytes) -> SuiteRun:
    """`suite`: tests/<branch>.tar.gz (a path or its bytes)."""
    cfg = steps.config
    steps.run(box, "remove_pytest_steering", scripts.scrub_cmd(), root=True)
    copy_in(box, steps, "copy_tests", suite)
    steps.run(box, "seal_tests", scripts.seal_cmd(cfg.isolate, cfg.user), root=True)
    env = {"HOME": "/root" if cfg.isolate else cfg.home, **scripts.TEST_ENV}
    if cfg.isolate:
        env["TF_PROGRAM_UID"] = str(cfg.program_uid)
    command = scripts.run_tests_cmd(cfg.pytest_workers)
    run = steps.run_untrusted(
        box, "run_tests", command, scripts.TESTS_LOG, cfg.test_timeout, env=env, grader=cfg.isolate
    )
    return SuiteRun(run, read_results(box, steps))


def copy_in(box: GradingSandbox, steps: StepRunner, step: str, tarball: Path | bytes) -> None:
    """A tar (or tar.gz: the engine unpacks both) into the workspace."""
    start = time.monotonic()
    if isinstance(tarball, bytes):
        box.put_archive_stream(WS, io.BytesIO(tarball))
        steps.record(step, f"put_archive <{len(tarball)} bytes> -> {WS}", start, "", 0)
        return
    with tarball.open("rb") as data:
        box.put_archive_stream(WS, data)
    steps.record(step, f"put_archive {tarball.name} -> {WS}", start, f"{tarball.stat().st_size} bytes", 0)


def read_results(box: GradingSandbox, steps: StepRunner) -> bytes | None:
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


def suite_tarball(suite: Path) -> bytes:
    """A suite directory (eval/...) as the branch tarball: tests/<branch>.tar.gz."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted((suite / "eval").rglob("*")):
            if "__pycache__" in path.parts:
                continue
            tar.add(str(path), arcname=path.relative_to(suite).as_posix(), recursive=False)
    return buf.getvalue()
