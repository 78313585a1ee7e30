"""Run a branch's suite in a fresh cleanroom container and read the JUnit report."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import docker
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase

from taskfoundry.builders.layout import WORKSPACE
from taskfoundry.errors import SandboxError
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)
WS = WORKSPACE


@dataclass(frozen=True)
class TestOutcome:
    status: str  # passed / failure / error / skipped
    message: str = ""

    @property
    def timed_out(self) -> bool:
        return "Timeout" in self.message or "TimeoutExpired" in self.message


def run_suite(
    client: docker.DockerClient,
    image: str,
    suite: Path,
    executable: bytes | None,
    workers: int = 2,
    timeout: float = 1800,
    attempts: int = 2,
) -> dict[str, TestOutcome]:
    """JUnit `classname.name` -> outcome. Infrastructure failures are retried, then raised."""
    last: Exception | None = None
    for attempt in range(attempts):
        try:
            return _run_once(client, image, suite, executable, workers, timeout)
        except SandboxError as exc:
            last = exc
            log.warning("suite run failed (attempt %d): %s", attempt + 1, exc)
    raise SandboxError(f"suite run failed {attempts} times: {last}")


def _run_once(
    client: docker.DockerClient,
    image: str,
    suite: Path,
    executable: bytes | None,
    workers: int,
    timeout: float,
) -> dict[str, TestOutcome]:
    limits = SandboxLimits(memory_mb=2048, pids=1024, user="1000:1000")
    with DockerSandbox(image, limits, workdir=WS, client=client) as box:
        box.put_dir(suite / "eval", f"{WS}/eval")
        root = "0:0"
        if executable is not None:
            box.put_file(executable, f"{WS}/executable", mode=0o755)
        box.exec(["chown", "-R", "1000:1000", f"{WS}/eval"], timeout=60, user=root)
        extra = ["-n", str(workers)] if workers > 1 else []
        res = box.exec(["sh", "eval/run.sh", *extra], timeout=timeout)
        if res.timed_out:
            raise SandboxError(f"the suite did not finish in {timeout:g}s")
        try:
            xml = box.get_file(f"{WS}/eval/results.xml")
        except FileNotFoundError as exc:
            raise SandboxError(f"no JUnit report (exit {res.exit_code}): {res.text()[-1500:]}") from exc
    return parse_junit(xml)


def parse_junit(xml: bytes) -> dict[str, TestOutcome]:
    report = JUnitXml.fromstring(xml.decode())
    results: dict[str, TestOutcome] = {}
    suites = [report] if report._tag == "testsuite" else list(report)
    for suite in suites:
        for case in suite:
            if isinstance(case, TestCase):
                results[f"{case.classname}.{case.name}"] = _case_outcome(case)
    return results


def _case_outcome(case: TestCase) -> TestOutcome:
    for item in getattr(case, "result", []):
        text = f"{item.message or ''} {item.text or ''}"[:500]
        if isinstance(item, Failure):
            return TestOutcome("failure", text)
        if isinstance(item, Error):
            return TestOutcome("error", text)
        if isinstance(item, Skipped):
            return TestOutcome("skipped", text)
    return TestOutcome("passed")
