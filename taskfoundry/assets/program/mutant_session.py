"""A pytest plugin: one session that tests many mutants (stdlib and pytest only; taskfoundry's
mutation analysis, `-p mutant_session`).

pytest collects the suite once; then, for each mutant of the plan in turn, this plugin
switches the program (`current`, which the guard reads before every run of the
program) and runs the mutant's tests, stopping at its first failure. Each test runs through
pytest's own run protocol (fixtures, pytest-timeout), as in a session of its own. After each
mutant a line goes to the results file, flushed (and one before it starts): a session that
dies is resumed by the analysis after the mutant it died on. Between mutants, what the
tests and the programs left goes (`session_reset`).

Plan (`TF_SESSION_PLAN`, JSON): {"current": path, "marks": dir, "results": path, "deadline":
epoch seconds, "entries": [{"id", "program", "switch", "tests": [node ids], "all": bool}]}.
A result: {"id", "status": killed|survived|timeout|error, "killed_by", "failed", "seconds",
"slowest": the slowest test's seconds}. Tests that killed more mutants run first.
"""

import json
import os
import time

import pytest
import session_reset  # shipped beside this plugin

_REPORTS: list = []


def _plan():
    with open(os.environ["TF_SESSION_PLAN"]) as handle:
        return json.load(handle)


def _switch(plan, entry):
    tmp = plan["current"] + ".tmp"
    with open(tmp, "w") as handle:
        handle.write(f"program={entry['program']}\nswitch={entry['switch']}\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, plan["current"])
    _clear_marks(plan)


def _clear_marks(plan):
    for name in os.listdir(plan["marks"]):
        os.unlink(os.path.join(plan["marks"], name))


def _marks(plan):
    return sorted(os.listdir(plan["marks"]))


def _run(item):
    del _REPORTS[:]
    item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
    failed = [r for r in _REPORTS if r.failed]
    timed_out = any("Timeout" in str(r.longrepr) for r in failed)
    return bool(failed), timed_out


_KILLS: dict = {}  # node id -> mutants it killed in this session


def _order(entry):
    """The entry's tests, those that killed most mutants so far first: a mutant that dies
    mostly dies early, and a survivor runs them all anyway."""
    if entry.get("all"):
        return entry["tests"]
    return sorted(entry["tests"], key=lambda nodeid: -_KILLS.get(nodeid, 0))


def _test(plan, entry, items):
    """(status, killed_by, failed tests, slowest test's seconds) of one mutant. With "all"
    (the reference's check) every test runs, and one that hangs counts as failed, not as
    the program's timeout."""
    failed, slowest = [], 0.0
    for nodeid in _order(entry):
        item = items.get(nodeid)
        if item is None:
            return "error", None, [f"{nodeid} was not collected"], slowest
        start = time.monotonic()
        bad, timed_out = _run(item)
        slowest = max(slowest, time.monotonic() - start)
        marks = _marks(plan)
        if (timed_out or marks) and not entry.get("all"):
            return "timeout", None, [", ".join(marks) or f"{nodeid} timed out"], slowest
        if bad or timed_out or marks:
            failed.append(nodeid)
            if not entry.get("all"):
                _KILLS[nodeid] = _KILLS.get(nodeid, 0) + 1
                return "killed", nodeid, failed, slowest
            _clear_marks(plan)
    return ("killed" if failed else "survived"), (failed[0] if failed else None), failed, slowest


def pytest_runtest_logreport(report):
    _REPORTS.append(report)


def pytest_runtestloop(session):
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        return True
    plan = _plan()
    items = {item.nodeid: item for item in session.items}
    with open(plan["results"], "a") as out:
        for entry in plan["entries"]:
            if time.time() > plan["deadline"]:
                break
            start = time.monotonic()
            out.write(json.dumps({"started": entry["id"]}) + "\n")
            out.flush()
            _switch(plan, entry)
            status, killed_by, failed, slowest = _test(plan, entry, items)
            row = {"id": entry["id"], "status": status, "killed_by": killed_by, "failed": failed}
            row["slowest"] = round(slowest, 3)
            row["seconds"] = round(time.monotonic() - start, 3)
            out.write(json.dumps(row) + "\n")
            out.flush()
            session_reset.empty_basetemp(session)
            session_reset.sweep_programs_files()
    return True


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    session.exitstatus = 0  # the verdicts are in the results file, not in pytest's exit code
