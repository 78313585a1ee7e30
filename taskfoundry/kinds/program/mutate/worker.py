"""One container of the build image that rebuilds and tests mutants, one after another.

The suite sits in /workspace/eval as it does in the cleanroom, and /workspace/executable
is the guard (assets/mutant_guard.py), which runs the program built from the current
mutant. pytest runs as the grading harness runs it (`harness.suite`): with isolation, as
root with `eval/` sealed and each program call as its own uid (tfrun), else as the worker;
only on the tests that reach the mutant's line, stopping at the first failure. Rebuilds
run as root in /src.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Iterable
from pathlib import Path

from taskfoundry.assets import asset
from taskfoundry.errors import MutationError
from taskfoundry.grading import scripts
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.models import MutantRecord, Status
from taskfoundry.kinds.program.mutate.rebuild import MUTANT_DIR, PROGRAM, RebuildPlan, parse_sha
from taskfoundry.kinds.program.mutate.select import Planned
from taskfoundry.kinds.program.settings import MutationConfig
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob, install_runner, run_probes
from taskfoundry.layout import GOLD, WORKSPACE, WORKSPACE_EXECUTABLE
from taskfoundry.mutation.operators import Mutant
from taskfoundry.naming import junit_id
from taskfoundry.sandbox.base import ExecResult, Sandbox

ROOT = "0:0"
MARKS = "/tmp/tfm-marks"
GUARD_SETTINGS = f"{MUTANT_DIR}/guard.json"
_OUTCOME = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - .*)?$", re.M)


def node_id(junit: str, files: Iterable[str]) -> str:
    """pytest's node id of a test named as JUnit names it (`eval.tests.test_x.Class.test_y`)."""
    head, bracket, params = junit.partition("[")
    parts = head.split(".")
    known = set(files)
    for cut in range(len(parts) - 1, 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if path in known:
            return path + "::" + "::".join(parts[cut:]) + bracket + params
    raise MutationError(f"test {junit} is in no file of the suite")


class MutantWorker:
    def __init__(self, box: Sandbox, plan: RebuildPlan, config: MutationConfig, harness: EvalConfig) -> None:
        self.box, self.plan, self.config, self.harness = box, plan, config, harness
        self.files: set[str] = set()
        self.reference_sha: str | None = None
        self._originals: dict[str, bytes] = {}
        self._current: str | None = None  # the file that now holds a mutant

    def setup(self, suite: Path) -> None:
        """The suite, the guard, and the reference rebuilt once (which must succeed)."""
        self.files = {p.relative_to(suite).as_posix() for p in (suite / "eval").rglob("test_*.py")}
        self._root(f"mkdir -p {MUTANT_DIR} {MARKS} && chmod 1777 {MARKS}", 60)
        self.box.put_dir(suite / "eval", f"{WORKSPACE}/eval")
        guard = asset("program/mutant_guard.py")
        self.box.put_file(guard, WORKSPACE_EXECUTABLE, mode=0o755)
        settings = {
            "program": PROGRAM,
            "argv0": WORKSPACE_EXECUTABLE,
            "timeout": self.config.program_timeout,
            "cap": self.config.output_cap,
            "marks": MARKS,
        }
        self.box.put_file(json.dumps(settings).encode(), GUARD_SETTINGS)
        self._seal()
        install_runner(self.box)  # for the probes of guided generation
        res = self._build()
        self.reference_sha = parse_sha(res.text())
        if not res.ok or self.reference_sha is None:
            raise MutationError(f"the reference does not rebuild in its image: {res.text()[-1500:]}")

    def failing(self, tests: list[str]) -> set[str]:
        """Tests that fail on the rebuilt reference here: they cannot tell a mutant apart."""
        if not tests:
            return set()
        res, _marks = self._pytest(tests, first_failure=False)
        code = _exit_code(res)
        if code not in (0, 1):
            raise MutationError(
                f"the suite does not run on the reference (pytest exit {code}): {res.text()[-1500:]}"
            )
        return {junit_id(n) for _, n in _OUTCOME.findall(res.stdout.decode(errors="replace"))}

    def run(self, planned: Planned) -> MutantRecord:
        m = planned.mutant
        fields = {k: v for k, v in m.__dict__.items() if k not in ("start", "end")}
        record = MutantRecord(**fields, id=m.id, status="error", tests_run=len(planned.tests))
        self._swap_in(m)
        start = time.monotonic()
        build = self._build()
        record.build_seconds = round(time.monotonic() - start, 2)
        if not build.ok:
            record.status = "build_failed"
            record.detail = "timed out" if build.timed_out else build.text()[-600:]
        elif parse_sha(build.text()) == self.reference_sha:
            record.status, record.detail = "equivalent", "the stripped program is the reference's"
        else:
            start = time.monotonic()
            record.status, record.killed_by, record.detail = self._test(planned.tests)
            record.test_seconds = round(time.monotonic() - start, 2)
        return record

    def outcomes(self, m: Mutant, probes: list[Probe]) -> list[Outcome] | None:
        """What the program built from `m` does on each probe; None when it does not build."""
        self._swap_in(m)
        if not self._build().ok:
            return None
        return run_probes(
            self.box, RunnerJob(executable=PROGRAM, timeout=self.config.program_timeout), probes
        )

    def reference(self, probes: list[Probe]) -> list[Outcome]:
        """What the reference (the gold program) does on each probe."""
        return run_probes(self.box, RunnerJob(executable=GOLD, timeout=self.config.program_timeout), probes)

    def _swap_in(self, m: Mutant) -> None:
        """The source now holds mutant `m` (and the file an earlier mutant changed, its original)."""
        target = self.plan.target(m.file)
        if self._current is not None and self._current != target:
            self._write(self._current, self._originals[self._current])
        if target not in self._originals:
            self._originals[target] = self.box.get_file(target)
        self._write(target, m.apply(self._originals[target]))
        self._current = target

    def _test(self, tests: tuple[str, ...]) -> tuple[Status, str | None, str]:
        res, marks = self._pytest(list(tests), first_failure=True)
        code = _exit_code(res)
        if res.timed_out or marks:
            return "timeout", None, ", ".join(marks) or "the tests did not finish"
        if code == 0:
            return "survived", None, ""
        failed = _OUTCOME.findall(res.stdout.decode(errors="replace"))
        if code == 1 and failed:
            return "killed", junit_id(failed[0][1]), ""
        return "error", None, f"pytest exit {code}: {res.text()[-600:]}"

    # in the container ---------------------------------------------------------------
    def _write(self, path: str, data: bytes) -> None:
        # `cat >` keeps the file's owner and mode and gives it a new mtime, which make reads
        res = self.box.exec(f"cat > {shlex.quote(path)}", timeout=60, stdin=data, user=ROOT)
        if not res.ok:
            raise MutationError(f"cannot write {path}: {res.text()[-500:]}")

    def _build(self) -> ExecResult:
        return self.box.exec(
            ["sh", "-c", self.plan.script()], timeout=self.config.build_timeout, user=ROOT, workdir="/src"
        )

    def _root(self, cmd: str, timeout: float, workdir: str | None = None) -> None:
        res = self.box.exec(cmd, timeout=timeout, user=ROOT, workdir=workdir)
        if not res.ok:
            raise MutationError(f"`{cmd}` failed: {res.text()[-500:]}")

    def _seal(self) -> None:
        """The workspace as the harness leaves it before the suite runs (`scripts.seal_cmd`)."""
        if self.harness.isolate:
            self._root(scripts.seal_cmd(True, self.harness.user), 120, workdir=WORKSPACE)
        else:  # the worker runs pytest and the program, and writes in the workspace
            self._root(f"chown -R {self.harness.user} {WORKSPACE}", 120)

    def _pytest(self, tests: list[str], first_failure: bool) -> tuple[ExecResult, list[str]]:
        cfg = self.config
        per_test = cfg.program_timeout * 3 + 10
        argv = [
            "python3",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--tb=no",
            "-rfE",
            "--rootdir=.",
            "--basetemp=/tmp/tfm-pytest",  # pytest empties it first
            f"--timeout={per_test:g}",
            *(["-x"] if first_failure else []),
            *(node_id(t, self.files) for t in tests),
        ]
        quoted = shlex.join(argv)
        script = (
            f"rm -f {MARKS}/*; TF_TIMEOUT={cfg.program_timeout + 10:g} {quoted} > /tmp/tfm-out 2>&1; "
            f'echo "tfm-exit $?"; cat /tmp/tfm-out | tail -c 200000; echo; ls {MARKS} | sed "s/^/tfm-mark /"'
        )
        env = dict(scripts.TEST_ENV)
        if self.harness.isolate:  # tfrun drops each program call to this uid
            env |= {"HOME": "/root", "TF_PROGRAM_UID": str(self.harness.program_uid)}
        user = ROOT if self.harness.isolate else self.harness.user
        timeout = len(tests) * per_test + 120
        res = self.box.exec(script, timeout=timeout, env=env, user=user, workdir=WORKSPACE)
        marks = re.findall(r"^tfm-mark (\w+)$", res.stdout.decode(errors="replace"), re.M)
        return res, marks


def _exit_code(res: ExecResult) -> int | None:
    found = re.search(r"^tfm-exit (\d+)$", res.stdout.decode(errors="replace"), re.M)
    return int(found.group(1)) if found else None
