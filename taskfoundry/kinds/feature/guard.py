"""The runtime guard of feature grading, host side: install it, run the tests under it, judge.

In the container, root (assets/feature_guard_run.py) starts the boot (assets/feature_boot.py)
with a safe path; the boot reads the hidden F2P files, arms the guard (assets/feature_guard.py,
a pytest plugin) and drops to the worker before any submitted code runs. Every test phase's
outcome, the exact types the interface returned, every change to pytest's reporting
machinery and every refused access is sent to root with a chained HMAC; root keeps what
verifies in STREAM, in a directory only root can read. Here that stream decides:

- a `blocked`, `tamper` or `forged` record: `grader_tampering`, nothing counts;
- no `end` record (the session never finished: `os._exit`, a crash): `incomplete_run`;
- a test the JUnit report calls passed that the guard did not see pass: `failure`
  (`guard_unrecorded`): a report rewritten after the fact does not count;
- an F2P test in which the interface returned a type the reference never returned there
  (a subclass is another type): `failure` (`wrong_type`); one in which it returned
  nothing the guard could see, where the reference did: `failure` (`type_unobserved`);
- an F2P test whose run did not show every value the reference returned in it (recorded at
  package time, held here, never in the container; where those reached the test's own code,
  exactly those and no more; a value that varied between the reference's runs, its type:
  kinds/feature/evidence.py): `failure` (`unproven`).

The last decides: the stream comes from the process the submission runs in, so everything
in it may be forged (its key is in that process); what it cannot forge without the hidden
tests' answers is the reference's values. Records after the session's `end` (atexit
handlers, timers, signals) are not read at all.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from taskfoundry.assets import asset
from taskfoundry.assets.feature.feature_types import record_id
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.grading.records import EvalStepError
from taskfoundry.grading.sandbox import WS, GradingSandbox, TooLarge
from taskfoundry.kinds.feature.evidence import shown

GUARD_DIR = "/tmp/tf-guard"  # root's, 0700: the boot reads it as root
OUT_DIR = "/tmp/tf-guard-out"  # root's, 0700
STREAM = f"{OUT_DIR}/stream.jsonl"
CONFIG = f"{GUARD_DIR}/config.json"
PREPARE = f"mkdir -m 0700 {GUARD_DIR} && mkdir -m 0700 {OUT_DIR}"
STREAM_CAP = 16 * 1024 * 1024
_ALARMS = ("blocked", "tamper", "forged")  # they can only fail a run: read wherever they are
_ASSETS = {
    "feature_guard_run.py": "run.py",
    "feature_boot.py": "boot.py",
    "feature_guard.py": "tf_feature_guard.py",
    "feature_types.py": "tf_feature_types.py",
}


def _asset(name: str) -> bytes:
    return asset(f"feature/{name}")


def install(
    box: GradingSandbox,
    watch: dict[str, list[int]],
    protected: list[str],
    interface: list[Any],
    loose: Collection[str] = (),
) -> None:
    """The boot, the plugin, root's wrapper and their configuration (PREPARE must have run):
    the submitted lines to watch and the hidden files, by path in the workspace; the functions
    whose types are observed besides their values (`loose`: kinds/feature/evidence.py)."""
    for shipped, name in _ASSETS.items():
        box.put_file(_asset(shipped), f"{GUARD_DIR}/{name}", mode=0o600)
    config = {
        "watch": {f"{WS}/{rel}": lines for rel, lines in watch.items()},
        "protected": [f"{WS}/{rel}" for rel in protected],
        "interface": interface,
        "loose": sorted(loose),
    }
    box.put_file(json.dumps(config).encode(), CONFIG, mode=0o600)


def command(test_command: str, user: str) -> str:
    """The task's pytest command under the guard (to be run as root): its interpreter runs the
    boot instead of `-m pytest`, which would put the workspace first on sys.path."""
    words = shlex.split(test_command)
    if len(words) < 3 or words[1:3] != ["-m", "pytest"]:
        raise EvalStepError(
            "bad_task", f"a feature task's test command runs `PYTHON -m pytest`: {test_command}"
        )
    uid, _, gid = user.partition(":")
    boot = [words[0], f"{GUARD_DIR}/boot.py", CONFIG, "--", *words[3:]]
    return shlex.join(["python3", "-I", f"{GUARD_DIR}/run.py", STREAM, uid, gid or uid, "--", *boot])


@dataclass
class Records:
    passed: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    alarms: list[str] = field(default_factory=list)  # blocked, tamper and forged records, described
    types: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # test -> function -> types
    values: dict[str, set[str]] = field(default_factory=dict)  # test -> observations (evidence)
    direct: dict[str, set[str]] = field(default_factory=dict)  # test -> those reaching its code
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


def parse(data: bytes | None, until_end: bool = True) -> Records:
    """The records of a run; past the session's `end` only alarms (`until_end=False`, reading
    all, is how its tests show what the cut stops)."""
    records = Records()
    for line in (data or b"").decode(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        kind = rec.get("k")
        if records.ended and until_end and kind not in _ALARMS:
            continue  # what runs after pytest's session (atexit, timers, signals) passes nothing
        listed = isinstance(rec.get("id"), str) and isinstance(rec.get("values"), list)
        if kind in ("values", "direct") and listed:
            seen = records.values if kind == "values" else records.direct
            seen.setdefault(rec["id"], set()).update(v for v in rec["values"] if isinstance(v, str))
        elif kind == "report" and isinstance(rec.get("id"), str):
            outcome, test = rec.get("outcome"), rec["id"]
            if outcome == "passed" and rec.get("when") == "call":
                records.passed.add(test)
            if rec.get("when") == "call" and isinstance(rec.get("types"), dict):
                records.types[test] = rec["types"]
            elif outcome == "failed":
                records.failed.add(test)
        elif kind == "blocked":
            records.alarms.append(f"refused {rec.get('event')} at {rec.get('where')}")
        elif kind == "tamper":
            changed = rec.get("changed")
            changed = changed if isinstance(changed, list) else []
            records.alarms.append(f"changed ({rec.get('stage')}): {', '.join(map(str, changed))}")
        elif kind == "forged":
            records.alarms.append(
                f"{rec.get('count')} records root could not verify, e.g. {rec.get('sample')}"
            )
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
        name = record_id(test.name)
        if name not in records.passed or name in records.failed:
            test.status = "failure"
            test.extra = {
                "error_code": "guard_unrecorded",
                "message": "the grader did not see this test pass",
            }


def _allowed(reference: dict[str, dict[str, list[str]]], test: str, function: str) -> set[str]:
    """The types the reference returned from `function` in `test`; for a call the reference
    did not make in that test, in any test."""
    if function in reference.get(test, {}):
        return set(reference[test][function])
    return {t for seen in reference.values() for t in seen.get(function, [])}


def wrong_types(
    result: EvaluationResult, branch: str, records: Records, reference: dict[str, dict[str, list[str]]]
) -> None:
    """A passed F2P test in which the interface returned a type the reference never did
    there, or nothing the guard could see where the reference returned, becomes a failure."""
    for test in result.test_results:
        if test.branch != branch or test.status != "passed" or test.name not in reference:
            continue
        # an empty list is nothing seen, not "never wrong"
        seen = {f: t for f, t in records.types.get(record_id(test.name), {}).items() if t}
        wrong = {f: sorted(set(t) - _allowed(reference, test.name, f)) for f, t in seen.items()}
        wrong = {f: t for f, t in wrong.items() if t}
        # the submission may reach a function another way than the reference: only a test in
        # which none of them returned visibly (monitoring switched off) is suspect
        missing = sorted(reference[test.name]) if not seen else []
        if wrong:
            message = "; ".join(f"{f} returned {', '.join(t)}" for f, t in sorted(wrong.items()))
            test.status, test.extra = "failure", {"error_code": "wrong_type", "message": message}
        elif missing:
            message = f"no return the grader could see from {', '.join(missing)}"
            test.status, test.extra = "failure", {"error_code": "type_unobserved", "message": message}


def unproven(
    result: EvaluationResult,
    branch: str,
    records: Records,
    reference: dict[str, list[str]],
    direct: Collection[str] = (),
) -> None:
    """A passed F2P test whose run did not show every value the reference returned in it
    becomes a failure, whatever the run reported (a test not run shows none). In a test of
    `direct` (the reference's values are those that reached the test's own code), the run
    must have handed the test's code exactly those: a forger claiming every guess shows more."""
    for test in result.test_results:
        required = reference.get(test.name) if test.branch == branch and test.status == "passed" else None
        if not required:
            continue
        if test.name in direct:  # missing, or claimed besides
            differ = set(required) ^ shown(records.direct.get(record_id(test.name), set()), required)
        else:
            differ = set(required) - records.values.get(record_id(test.name), set())
        if differ:
            test.status = "failure"
            test.extra = {
                "error_code": "unproven",
                "message": f"{len(differ)} values unlike the {len(required)} the reference returned here",
            }
