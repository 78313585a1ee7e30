"""The runtime guard of feature grading, host side: install it, run the tests under it, judge.

In the container (assets/feature_guard_run.py as root, assets/feature_guard.py as a pytest
plugin in the worker's pytest) every test phase's outcome, every change to pytest's
reporting machinery and every refused frame/gc/trace access is written to a pipe that root
reads into STREAM, a file in a directory only root can read. Here that stream decides:

- a `blocked` or `tamper` record: `grader_tampering`, nothing counts;
- no `end` record (the session never finished: `os._exit`, a crash): `incomplete_run`;
- a test the JUnit report calls passed that the guard did not see pass: `failure`
  (`guard_unrecorded`): a report rewritten after the fact does not count.

What the worker writes into the pipe itself can add records but not remove the guard's.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from importlib import resources

from taskfoundry.evaluate.models import EvaluationResult
from taskfoundry.harness.sandbox import WS, GradingSandbox, TooLarge

GUARD_DIR = "/tmp/tf-guard"  # root's, 0755: the worker's pytest imports the plugin from here
OUT_DIR = "/tmp/tf-guard-out"  # root's, 0700
STREAM = f"{OUT_DIR}/stream.jsonl"
PLUGIN = "tf_feature_guard"
WATCH = f"{GUARD_DIR}/watch.json"
PREPARE = f"mkdir -m 0755 {GUARD_DIR} && mkdir -m 0700 {OUT_DIR}"
ENV = {"PYTHONPATH": GUARD_DIR, "PYTEST_PLUGINS": PLUGIN, "TF_GUARD_WATCH": WATCH}
STREAM_CAP = 16 * 1024 * 1024


def _asset(name: str) -> bytes:
    return resources.files("taskfoundry.assets").joinpath(name).read_bytes()


def install(box: GradingSandbox, watch: dict[str, list[int]]) -> None:
    """The plugin, its root wrapper and the submitted lines to watch (paths in the workspace);
    PREPARE must have run as root."""
    box.put_file(_asset("feature_guard.py"), f"{GUARD_DIR}/{PLUGIN}.py")
    box.put_file(_asset("feature_guard_run.py"), f"{GUARD_DIR}/run.py")
    box.put_file(json.dumps({f"{WS}/{rel}": lines for rel, lines in watch.items()}).encode(), WATCH)


def command(test_command: str, user: str) -> str:
    """The test command as the worker under the guard (to be run as root)."""
    uid, _, gid = user.partition(":")
    inner = shlex.quote(f"cd {WS} && {test_command}")
    return f"python3 -I {GUARD_DIR}/run.py {uid} {gid or uid} {STREAM} -- sh -c {inner}"


@dataclass
class Records:
    passed: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    alarms: list[str] = field(default_factory=list)  # blocked and tamper records, described
    ended: bool = False
    started: bool = False

    def verdict(self) -> tuple[str, str] | None:
        """(error code, details) when the run cannot be graded, else None."""
        if self.alarms:
            return "grader_tampering", "\n".join(self.alarms[:20])
        if not self.started:
            return "incomplete_run", "the grader's plugin never started (pytest did not run)"
        if not self.ended:
            return "incomplete_run", "pytest's session never finished (os._exit or a crash before its end)"
        return None


def parse(data: bytes | None) -> Records:
    records = Records()
    for line in (data or b"").decode(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        kind = rec.get("k")
        if kind == "report" and isinstance(rec.get("id"), str):
            outcome, test = rec.get("outcome"), rec["id"]
            if outcome == "passed" and rec.get("when") == "call":
                records.passed.add(test)
            elif outcome == "failed":
                records.failed.add(test)
        elif kind == "blocked":
            records.alarms.append(f"refused {rec.get('event')} at {rec.get('where')}")
        elif kind == "tamper":
            changed = rec.get("changed")
            changed = changed if isinstance(changed, list) else []
            records.alarms.append(f"changed ({rec.get('stage')}): {', '.join(map(str, changed))}")
        elif kind == "start":
            records.started = True
        elif kind == "end":
            records.ended = True
    return records


def read(box: GradingSandbox) -> Records:
    try:
        return parse(box.read_file(STREAM, STREAM_CAP + 1024))
    except (FileNotFoundError, TooLarge):
        return Records()


def unrecorded(result: EvaluationResult, branch: str, records: Records) -> None:
    """A pass in the JUnit report the guard did not see happen becomes a failure."""
    for test in result.test_results:
        if test.branch != branch or test.status != "passed":
            continue
        if test.name not in records.passed or test.name in records.failed:
            test.status = "failure"
            test.extra = {
                "error_code": "guard_unrecorded",
                "message": "the grader did not see this test pass",
            }
