"""The mutation analysis's test session: one pytest for many mutants, in a worker's container.

The plugin (assets/program/mutant_session.py) takes each entry in turn: it writes which
program and switch are current (the guard reads that before every program call), runs the
entry's tests through pytest's own run protocol and writes a line per entry. The session runs
as the grading harness runs a suite: with isolation, as root with `eval/` sealed and each
program call as its own uid (tfrun); else as the worker. A session that dies is started again
after the entry it died on.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Iterable
from dataclasses import dataclass

from taskfoundry.assets import asset
from taskfoundry.errors import MutationError
from taskfoundry.grading import scripts
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.models import Status
from taskfoundry.kinds.program.mutate.rebuild import MUTANT_DIR
from taskfoundry.kinds.program.settings import MutationConfig
from taskfoundry.layout import WORKSPACE
from taskfoundry.sandbox.base import ExecResult, Sandbox

ROOT = "0:0"
MARKS = "/tmp/tfm-marks"  # the guard's timeout and flood marks
PLUGIN_DIR = f"{MUTANT_DIR}/plugin"
SESSION_DIR = f"{MUTANT_DIR}/session"  # the test session's files: pytest's user writes here
SCRATCH = "/tfm-scratch"  # pytest's base temporary directory: a tmpfs in the pool's workers
PLAN, RESULTS, CURRENT = (f"{SESSION_DIR}/{n}" for n in ("plan.json", "results.jsonl", "current"))


@dataclass(frozen=True)
class Entry:
    """One mutant for the test session: which program, which switch, which tests."""

    id: str
    program: str
    switch: int
    tests: tuple[str, ...]
    all: bool = False  # run every test (the reference's check), not only up to a failure
    watch: str = ""  # a watch build's file (schemata.INFECTED): what each test infects


@dataclass(frozen=True)
class Verdict:
    status: Status
    killed_by: str | None
    failed: tuple[str, ...]
    seconds: float
    slowest: float = 0.0  # the slowest test's seconds
    direct: int = 0  # tests called as plain functions, not through pytest's run protocol
    infects: dict[str, tuple[int, ...]] | None = None  # a watch entry's: node id -> switches


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


class TestSession:
    """The pytest session of one worker's container."""

    __test__ = False  # not a pytest class, despite the name

    def __init__(self, box: Sandbox, config: MutationConfig, harness: EvalConfig) -> None:
        self.box, self.config, self.harness = box, config, harness

    def install(self) -> None:
        """The session's directories (its own, writable by pytest's user) and the plugins."""
        user = ROOT if self.harness.isolate else self.harness.user
        cmd = (
            f"mkdir -p {MUTANT_DIR} {MARKS} {PLUGIN_DIR} {SESSION_DIR} {SCRATCH} && chmod 1777 {MARKS} "
            # pytest's alone: a program that could write beside its directory would leave
            # files there for the next mutant (session_reset sweeps /tmp, not this)
            f"&& chown {user} {SESSION_DIR} {SCRATCH} && chmod 0755 {SCRATCH}"
        )
        res = self.box.exec(cmd, timeout=60, user=ROOT)
        if not res.ok:
            raise MutationError(f"`{cmd}` failed: {res.text()[-500:]}")
        for plugin in ("program/mutant_session.py", "grading/session_reset.py"):
            self.box.put_file(asset(plugin), f"{PLUGIN_DIR}/{plugin.split('/')[1]}")

    def run(self, entries: list[Entry], deadline: float | None) -> dict[str, Verdict]:
        """Each entry's verdict, from one pytest session (resumed past an entry it died on)."""
        found: dict[str, Verdict] = {}
        todo = list(entries)
        while todo:
            res = self._run(todo, deadline)
            done, started = self._results()
            found |= done
            left = [e for e in todo if e.id not in found]
            if not left or started is None and not res.timed_out and _exit_code(res) == 0:
                break  # all done, or the deadline stopped the session before any
            if started is None:
                raise MutationError(f"the test session does not start: {res.text()[-1500:]}")
            if deadline is not None and time.time() > _epoch(deadline):
                break
            # the session died on it: a hang past every timeout, or a test that took pytest down
            status: Status = "timeout" if res.timed_out else "error"
            found[started] = Verdict(status, None, (f"the test session died: {res.text()[-400:]}",), 0.0)
            todo = [e for e in left if e.id != started]
        return found

    def _run(self, entries: list[Entry], deadline: float | None) -> ExecResult:
        cfg = self.config
        per_test = cfg.program_timeout * 3 + 10
        plan = {
            "current": CURRENT,
            "marks": MARKS,
            "results": RESULTS,
            "deadline": _epoch(deadline) if deadline is not None else time.time() + 10**7,
            "direct": cfg.direct_calls,
            "test_timeout": per_test,
            "entries": [e.__dict__ | {"tests": list(e.tests)} for e in entries],
        }
        self.box.put_file(json.dumps(plan).encode(), PLAN, mode=0o644)
        tests = sorted({t for e in entries for t in e.tests})
        argv = [
            "python3",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "mutant_session",
            "-q",
            "--tb=no",
            "--rootdir=.",
            f"--basetemp={SCRATCH}/pytest",  # pytest empties it first
            "--continue-on-collection-errors",
            f"--timeout={per_test:g}",
            *tests,
        ]
        script = (
            f"rm -f {RESULTS}; TF_TIMEOUT={cfg.program_timeout + 10:g} {shlex.join(argv)} "
            f'> /tmp/tfm-out 2>&1; echo "tfm-exit $?"; tail -c 4000 /tmp/tfm-out'
        )
        env = dict(scripts.TEST_ENV) | {"PYTHONPATH": PLUGIN_DIR, "TF_SESSION_PLAN": PLAN}
        if self.harness.isolate:  # tfrun drops each program call to this uid
            env |= {"HOME": "/root", "TF_PROGRAM_UID": str(self.harness.program_uid), "TF_REAPED": "1"}
        user = ROOT if self.harness.isolate else self.harness.user
        timeout = sum(len(e.tests) for e in entries) * per_test + 120
        if deadline is not None:
            timeout = min(timeout, max(deadline - time.monotonic(), 0) + per_test + 120)
        return self.box.exec(script, timeout=timeout, env=env, user=user, workdir=WORKSPACE)

    def _results(self) -> tuple[dict[str, Verdict], str | None]:
        """The verdicts of the last session, and the entry it started last without a verdict."""
        res = self.box.exec(f"cat {RESULTS} 2>/dev/null || true", timeout=60, user=ROOT)
        found, started = {}, None
        for line in res.stdout.decode(errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line cut short when the session died
            if "started" in row:
                started = row["started"]
                continue
            found[row["id"]] = Verdict(
                row["status"],
                row["killed_by"],
                tuple(row["failed"]),
                row["seconds"],
                row["slowest"],
                row["direct"],
                {n: tuple(ids) for n, ids in row.get("infects", {}).items()},
            )
        return found, (started if started not in found else None)


def _epoch(deadline: float) -> float:
    """A `time.monotonic` instant as wall-clock seconds (the container's clock is the host's)."""
    return time.time() + (deadline - time.monotonic())


def _exit_code(res: ExecResult) -> int | None:
    found = re.search(r"^tfm-exit (\d+)$", res.stdout.decode(errors="replace"), re.M)
    return int(found.group(1)) if found else None
