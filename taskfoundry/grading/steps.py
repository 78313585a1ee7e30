"""StepRunner: run one evaluation step in a sandbox and record it in the result's log."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.records import EvalStepError, LogStep
from taskfoundry.grading.sandbox import GradingSandbox, TooLarge
from taskfoundry.grading.scripts import logged
from taskfoundry.sandbox.base import ExecResult

log = logging.getLogger(__name__)
ROOT = "0:0"


@dataclass(frozen=True)
class Outcome:
    """What an untrusted step did: exit code, timeout, and the tail of its output."""

    returncode: int
    timed_out: bool
    output: str


class StepRunner:
    def __init__(self, log: list[LogStep], config: EvalConfig, branch: str | None = None) -> None:
        self.log = log
        self.config = config
        self.branch = branch

    def record(
        self,
        step: str,
        command: str,
        start: float,
        output: str,
        returncode: int,
        timed_out: bool = False,
        truncated: bool = False,
    ) -> None:
        self.log.append(
            LogStep(
                step=step,
                command=command,
                wall_time=round(time.monotonic() - start, 3),
                output=self._tail(output),
                returncode=returncode,
                branch=self.branch,
                timed_out=timed_out,
                truncated=truncated,
            )
        )

    def run(
        self,
        box: GradingSandbox,
        step: str,
        command: str,
        *,
        root: bool = False,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        error_code: str | None = None,
    ) -> ExecResult:
        """A trusted step (no submission code runs in it). A failure raises EvalStepError
        with `error_code` (default `<step>_failed`) and the output as details."""
        start = time.monotonic()
        res = box.exec(
            command,
            timeout=timeout or self.config.step_timeout,
            env=env,
            user=ROOT if root else self.config.user,
        )
        self.record(step, command, start, res.text(), res.exit_code, res.timed_out, res.truncated)
        if not res.ok:
            raise EvalStepError(error_code or f"{step}_failed", self._tail(res.text()).strip())
        return res

    def run_untrusted(
        self,
        box: GradingSandbox,
        step: str,
        command: str,
        logfile: str,
        timeout: float,
        env: Mapping[str, str] | None = None,
        *,
        grader: bool = False,
    ) -> Outcome:
        """Run a command in which submission code runs, its output in `logfile`; then freeze
        the container and read the log back. No exec follows in this container. `grader`:
        the command runs as root (pytest, which drops the program to its own uid)."""
        start = time.monotonic()
        user = ROOT if grader else self.config.user
        res = box.exec(logged(command, logfile), timeout=timeout, env=env, user=user)
        box.freeze()
        output = self._read_log(box, logfile) + res.text()
        self.record(step, command, start, output, res.exit_code, res.timed_out)
        return Outcome(res.exit_code, res.timed_out, self._tail(output))

    def _read_log(self, box: GradingSandbox, logfile: str) -> str:
        cap = self.config.output_bytes
        try:
            return box.read_file(logfile, cap).decode(errors="replace")
        except FileNotFoundError:
            return ""
        except TooLarge:
            return f"[{logfile} is larger than {cap} bytes: not read]\n"

    def _tail(self, text: str) -> str:
        keep = self.config.log_chars
        return text if len(text) <= keep else "[... cut ...]\n" + text[-keep:]
