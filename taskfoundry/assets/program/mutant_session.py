"""A pytest plugin: one session that tests many mutants (stdlib and pytest only; taskfoundry's
mutation analysis, `-p mutant_session`).

pytest collects the suite once; then, for each mutant of the plan in turn, this plugin
switches the program (`current`, which the guard reads before every run of the
program) and runs the mutant's tests, stopping at its first failure. Each test runs through
pytest's own run protocol (fixtures, pytest-timeout), as in a session of its own. After each
mutant a line goes to the results file, flushed (and one before it starts): a session that
dies is resumed by the analysis after the mutant it died on.

Plan (`TF_SESSION_PLAN`, JSON): {"current": path, "marks": dir, "results": path, "deadline":
epoch seconds, "entries": [{"id", "program", "switch", "tests": [node ids], "all": bool}]}.
A result: {"id", "status": killed|survived|timeout|error, "killed_by", "failed", "seconds"}.
"""

import json
import os
import shutil
import time

import pytest

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


def _test(plan, entry, items):
    """(status, killed_by, failed tests) of one mutant. With "all" (the reference's check)
    every test runs, and one that hangs counts as failed, not as the program's timeout."""
    failed = []
    for nodeid in entry["tests"]:
        item = items.get(nodeid)
        if item is None:
            return "error", None, [f"{nodeid} was not collected"]
        bad, timed_out = _run(item)
        marks = _marks(plan)
        if (timed_out or marks) and not entry.get("all"):
            return "timeout", None, [", ".join(marks) or f"{nodeid} timed out"]
        if bad or timed_out or marks:
            failed.append(nodeid)
            if not entry.get("all"):
                return "killed", nodeid, failed
            _switch(plan, entry)  # the marks go
    return ("killed" if failed else "survived"), (failed[0] if failed else None), failed


def _empty_basetemp(session):
    """Each test's tmp_path is a numbered directory that pytest finds by listing the base
    directory: emptied after each mutant, so that list stays short (a session of its own
    starts empty too)."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    base = factory.getbasetemp()
    for path in base.iterdir():
        shutil.rmtree(path, ignore_errors=True)


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
            status, killed_by, failed = _test(plan, entry, items)
            row = {"id": entry["id"], "status": status, "killed_by": killed_by, "failed": failed}
            row["seconds"] = round(time.monotonic() - start, 3)
            out.write(json.dumps(row) + "\n")
            out.flush()
            _empty_basetemp(session)
    return True


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    session.exitstatus = 0  # the verdicts are in the results file, not in pytest's exit code
