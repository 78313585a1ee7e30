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
epoch seconds, "direct": bool, "test_timeout": seconds, "entries": [{"id", "program",
"switch", "tests": [node ids], "all": bool, "watch": path or ""}]}.
A result: {"id", "status": killed|survived|timeout|error, "killed_by", "failed", "seconds",
"slowest": the slowest test's seconds, "direct": tests called directly, "infects": {node id:
[switch numbers]}}. Tests that killed more mutants run first. An entry with "watch" runs a
watch build: the switch numbers its program writes to that file during a test are the
mutants the test infects ("infects", for each test that passed).
"""

import inspect
import itertools
import json
import os
import shutil
import signal
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
    """(failed, timed out) of one test, through pytest's run protocol."""
    del _REPORTS[:]
    item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
    failed = [r for r in _REPORTS if r.failed]
    timed_out = any("Timeout" in str(r.longrepr) for r in failed)
    return bool(failed), timed_out


class _Expired(BaseException):
    """The direct call's timeout (a BaseException: the test's own `except Exception` does not
    swallow it)."""


_DIRS = itertools.count()
_TMP_PATH_CLOSURE = {"tmp_path", "tmp_path_factory", "request"}  # what tmp_path itself asks for


def _plain(item, conftests):
    """A test the protocol adds nothing to: a module-level function whose only fixture is
    tmp_path, without marks or parameters, in a suite without conftest hooks."""
    return (
        not conftests
        and isinstance(item, pytest.Function)
        and item.cls is None
        and not hasattr(item, "callspec")
        and set(inspect.signature(item.obj).parameters) <= {"tmp_path"}
        and set(item.fixturenames) <= _TMP_PATH_CLOSURE  # no autouse fixture either
        and not any(item.iter_markers())
    )


def _call(item, seconds):
    """(failed, timed out) of one test called as a function; SIGALRM interrupts it as
    pytest-timeout's signal method does (tfrun still kills the program's processes)."""
    tmp = item.config._tmp_path_factory.getbasetemp() / f"direct{next(_DIRS)}"
    tmp.mkdir(mode=0o700)  # as pytest makes tmp_path

    def expire(signum, frame):
        raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        item.obj(**({"tmp_path": tmp} if "tmp_path" in item.fixturenames else {}))  # `_plain`: its only one
        return False, False
    except _Expired:
        return True, True
    except (Exception, SystemExit):  # an assertion, or any error of the test: it failed
        return True, False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        shutil.rmtree(tmp, ignore_errors=True)


def _conftests(session):
    """Whether a conftest.py is loaded: its hooks would be bypassed by a direct call."""
    plugins = session.config.pluginmanager.get_plugins()
    return any(str(getattr(p, "__file__", "")).endswith("conftest.py") for p in plugins)


_KILLS: dict = {}  # node id -> mutants it killed in this session


def _order(entry):
    """The entry's tests, those that killed most mutants so far first: a mutant that dies
    mostly dies early, and a survivor runs them all anyway."""
    if entry.get("all"):
        return entry["tests"]
    return sorted(entry["tests"], key=lambda nodeid: -_KILLS.get(nodeid, 0))


def _infected(path):
    """The switch numbers a watch build wrote to `path` (which is then gone)."""
    try:
        with open(path) as handle:
            found = sorted({int(n) for n in handle.read().split() if n.isdigit()})
        os.unlink(path)
        return found
    except OSError:
        return []


def _test(plan, entry, items, direct, infects):
    """(status, killed_by, failed tests, slowest test's seconds, tests called directly) of one
    mutant. With "all" (the reference's check) every test runs, and one that hangs counts as
    failed, not as the program's timeout. `direct`: node ids that may be called directly.
    With "watch", `infects` gets what each test that passed infects. None: the deadline came
    before its last test (a slow program's survivor runs tests of seconds each: ansible-lint's
    stage ended 324 s past its deadline when it was looked at between mutants alone)."""
    failed, slowest, called = [], 0.0, 0
    watch = entry.get("watch")
    for index, nodeid in enumerate(_order(entry)):
        if index and not entry.get("all") and time.time() > plan["deadline"]:
            return None
        item = items.get(nodeid)
        if item is None:
            return "error", None, [f"{nodeid} was not collected"], slowest, called
        if watch:
            _infected(watch)  # nothing left from before this test
        start = time.monotonic()
        if nodeid in direct:
            called += 1
            bad, timed_out = _call(item, plan["test_timeout"])
        else:
            bad, timed_out = _run(item)
        slowest = max(slowest, time.monotonic() - start)
        if watch and not (bad or timed_out):
            infects[nodeid] = _infected(watch)
        marks = _marks(plan)
        if (timed_out or marks) and not entry.get("all"):
            return "timeout", None, [", ".join(marks) or f"{nodeid} timed out"], slowest, called
        if bad or timed_out or marks:
            failed.append(nodeid)
            if not entry.get("all"):
                _KILLS[nodeid] = _KILLS.get(nodeid, 0) + 1
                return "killed", nodeid, failed, slowest, called
            _clear_marks(plan)
    status = "killed" if failed else "survived"
    return status, (failed[0] if failed else None), failed, slowest, called


def pytest_runtest_logreport(report):
    _REPORTS.append(report)


def pytest_runtestloop(session):
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        return True
    plan = _plan()
    items = {item.nodeid: item for item in session.items}
    conftests = _conftests(session)
    direct = {n for n, i in items.items() if plan.get("direct") and _plain(i, conftests)}
    with open(plan["results"], "a") as out:
        for entry in plan["entries"]:
            if time.time() > plan["deadline"]:
                break
            start = time.monotonic()
            out.write(json.dumps({"started": entry["id"]}) + "\n")
            out.flush()
            _switch(plan, entry)
            infects: dict = {}
            verdict = _test(plan, entry, items, direct, infects)
            if verdict is None:
                break  # the deadline came in the middle of it: no verdict, not analysed
            status, killed_by, failed, slowest, called = verdict
            row = {"id": entry["id"], "status": status, "killed_by": killed_by, "failed": failed}
            row |= {"slowest": round(slowest, 3), "direct": called, "infects": infects}
            row["seconds"] = round(time.monotonic() - start, 3)
            out.write(json.dumps(row) + "\n")
            out.flush()
            session_reset.empty_basetemp(session)
            session_reset.sweep_programs_files()
    return True


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    session.exitstatus = 0  # the verdicts are in the results file, not in pytest's exit code
