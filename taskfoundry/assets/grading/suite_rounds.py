"""A pytest plugin: the suite run once per program in one session (stdlib and pytest only;
taskfoundry's gold/dummy filter, `-p suite_rounds`).

The filter runs the same suite against the gold several times and against each dummy. In
one session pytest starts and collects once; this plugin then runs every collected test
(of this container's slice) once per round, `./executable` being that round's program,
copied in by pytest (root) before the round. Each test runs through pytest's own run
protocol (fixtures, pytest-timeout), as in a session of its own; between rounds, what the
tests and the programs left goes (`session_reset`).

Settings (`TF_ROUNDS`, JSON): {"executable": path, "rounds": [program path, ...], "slice":
[i, n], "out": path}. The outcomes go to `out` (JSON: one {node id: [status, message,
text]} per round), written when the last round ends; status as JUnit says it: passed,
failure (the test), error (its set-up or tear-down), skipped.
"""

import json
import os
import shutil

import session_reset  # shipped beside this plugin

_REPORTS: dict = {}


def _settings():
    with open(os.environ["TF_ROUNDS"]) as handle:
        return json.load(handle)


def pytest_collection_modifyitems(config, items):
    index, count = _settings()["slice"]
    items[:] = [item for i, item in enumerate(items) if i % count == index]


def pytest_runtest_logreport(report):
    _REPORTS.setdefault(report.nodeid, []).append(report)


def _outcome(reports):
    for report in reports:
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash is not None else str(report.longrepr)
            status = "failure" if report.when == "call" else "error"
            return [status, message, str(report.longrepr)[:2000]]
    for report in reports:
        if report.skipped:
            return ["skipped", "", ""]
    return ["passed", "", ""]


def _install(program, executable):
    tmp = executable + ".tf-next"
    shutil.copyfile(program, tmp)
    os.chmod(tmp, 0o755)
    os.replace(tmp, executable)


def pytest_runtestloop(session):
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        return True
    settings = _settings()
    rounds = []
    for program in settings["rounds"]:
        _install(program, settings["executable"])
        _REPORTS.clear()
        items = session.items
        for i, item in enumerate(items):
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        rounds.append({item.nodeid: _outcome(_REPORTS.get(item.nodeid, [])) for item in items})
        session_reset.empty_basetemp(session)
        session_reset.sweep_programs_files()
    tmp = settings["out"] + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(rounds, handle)
    os.replace(tmp, settings["out"])
    return True
