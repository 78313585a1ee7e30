"""The feature kind on examples/featlib, through the flow and `taskfoundry eval`'s dispatch by kind."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from taskfoundry.errors import FeatureError
from taskfoundry.evaluate.run import evaluate_run
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.summary import score_task
from taskfoundry.kinds.feature import attacks, guard, scan
from taskfoundry.kinds.feature.env import environment_stage
from taskfoundry.kinds.feature.grade import grade_feature, start_state_files, start_state_submission
from taskfoundry.kinds.feature.selfcheck import leaks, self_check
from taskfoundry.kinds.feature.settings import FeatureSettings
from taskfoundry.kinds.feature.taskfile import FeatureTaskYaml
from taskfoundry.models import TestsJson, load_json_model, load_yaml_model
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sources import SourceConfig

from conftest import make_repo

pytestmark = pytest.mark.docker


def _task(path: Path) -> FeatureTaskYaml:
    return load_yaml_model(path / "task.yaml", FeatureTaskYaml)


def _members(tarball: Path | bytes) -> dict[str, bytes]:
    data = tarball.read_bytes() if isinstance(tarball, Path) else tarball
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_featlib_tasks_at_both_levels(featlib_tasks: list[Path]) -> None:
    assert [p.name.rsplit(".", 2)[1:] for p in featlib_tasks] == [["slug", "l1"], ["slug", "l2"]]
    one, two = (_task(p) for p in featlib_tasks)
    assert (one.kind, one.level, two.level) == ("feature", 1, 2)
    assert one.f2p == two.f2p and len(one.f2p) >= 3 and all(t.startswith("tests.test_slug.") for t in one.f2p)
    assert one.p2p and not set(one.p2p) & set(one.f2p)
    assert one.removed_lines > 3 and {i.name for i in one.interface} == {"slugify", "unique_slug"}
    assert "--timeout=60" in one.test_command and "tests/test_slug.py" in one.test_command
    tests = load_json_model(featlib_tasks[0] / "tests.json", TestsJson)
    assert list(tests.expected().values()) == [one.f2p + one.p2p]
    (suite,) = (featlib_tasks[0] / "tests").iterdir()
    hidden = _members(suite)
    assert "eval/restore/tests/test_slug.py" in hidden and "eval/restore/tests/conftest.py" in hidden
    assert "eval/base/featlib/slug.py" in _members(next((featlib_tasks[1] / "tests").iterdir()))
    prompt = (featlib_tasks[0] / "prompt.md").read_text()
    assert "def slugify(title: str" in prompt and "from featlib.slug import slugify, unique_slug" in prompt


def test_start_states_hold_no_removed_code(featlib_tasks: list[Path], docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    one = _members(start_state_submission(featlib_tasks[0], docker_client, tmp_path / "l1.tar.gz"))
    assert "tests/test_slug.py" not in one  # the hidden F2P file
    assert "tests/test_util.py" in one and "featlib/util.py" in one
    slug = one["featlib/slug.py"].decode()
    assert "NotImplementedError" in slug and 'out = f"{out}{separator}{part}"' not in slug
    assert _members(start_state_submission(featlib_tasks[1], docker_client, tmp_path / "l2.tar.gz")) == {}


def test_reports_name_the_dropped(featlib_tasks: list[Path]) -> None:
    report = json.loads((featlib_tasks[0] / "reports" / "feature.json").read_text())
    assert report["environment"]["failing_files"] == {"tests/test_broken.py": "1 of 2 tests fail"}
    # build_defaults runs when featlib is imported (the trace's collection record): it stays
    assert report["review_dropped"]["defaults"].startswith("nothing_removed")
    # util's P2P files are those calling none of its objects: it goes on, past the one task kept
    assert report["validate_dropped"]["util"].startswith("max_tasks")
    assert report["validate_dropped"]["table"].startswith("max_tasks")


def _run_dir(root: Path, name: str, submissions: dict[str, Path]) -> Path:
    run = root / name
    for task_id, path in submissions.items():
        (run / task_id).mkdir(parents=True)
        (run / task_id / "submission.tar.gz").write_bytes(path.read_bytes())
    return run


def _forged(start: Path, dest: Path) -> Path:
    """The start state with the tests made to pass: a conftest that skips, a P2P file rewritten."""
    files = _members(start) | {
        "tests/conftest.py": b"import pytest\n\n@pytest.fixture(autouse=True)\n"
        b"def _skip():\n    pytest.skip('x')\n",
        "tests/test_slug.py": b"def test_slugify():\n    assert True\n",
    }
    return _tar(files, dest)


def test_solution_resolves_start_state_does_not(
    featlib_tasks: list[Path], docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    tasks_dir = featlib_tasks[0].parent
    ids = [p.name for p in featlib_tasks]
    solved = evaluate_run(
        _run_dir(tmp_path, "gold", {i: tasks_dir / i / "solution.tar.gz" for i in ids}),
        tasks_dir,
        EvalConfig(),
        docker_client,
    )
    assert [(s.task_id, s.resolved, s.pass_rate) for s in solved.tasks] == [(i, True, 1.0) for i in ids]
    starts = {i: start_state_submission(tasks_dir / i, docker_client, tmp_path / f"{i}.tar.gz") for i in ids}
    starts[ids[0] + "-forged"] = _forged(starts[ids[0]], tmp_path / "forged.tar.gz")
    run = _run_dir(tmp_path, "start", {i: p for i, p in starts.items() if not i.endswith("-forged")})
    summary = evaluate_run(run, tasks_dir, EvalConfig(), docker_client)
    for score, task_id in zip(summary.tasks, ids, strict=True):
        task = _task(tasks_dir / task_id)
        result = json.loads((run / task_id / f"{task_id}.eval.json").read_text())
        status = {t["name"]: t["status"] for t in result["test_results"]}
        assert not score.resolved and score.passed == len(task.p2p)
        assert all(status[t] == "passed" for t in task.p2p)
        assert all(status[t] in ("failure", "error") for t in task.f2p)
    forged = _run_dir(tmp_path, "forged", {ids[0]: starts[ids[0] + "-forged"]})
    (score, *_) = evaluate_run(forged, tasks_dir, EvalConfig(), docker_client).tasks
    assert score.task_id == ids[0] and not score.resolved and score.passed == len(_task(featlib_tasks[0]).p2p)


PYPROJECT = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "{name}"\nversion = "0.1"\n\n[tool.setuptools]\npackages = ["{name}"]\n'
)


@pytest.mark.parametrize(
    ("tests", "reason"),
    [
        ({"tests/test_a.py": "def test_a():\n    assert 1 == 2\n"}, "no test file passes completely"),
        ({"tests/helpers.py": "X = 1\n"}, "tests do not run"),
    ],
)
def test_bad_repositories_end_with_a_reason(
    tests: dict[str, str], reason: str, base_image, docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(
        tmp_path / "badlib",
        {"pyproject.toml": PYPROJECT.format(name="badlib"), "badlib/__init__.py": "", **tests},
    )
    src = source_stage(str(repo), SourceConfig(), tmp_path / "work")
    with pytest.raises(FeatureError, match=reason):
        environment_stage(src, None, FeatureSettings(out=tmp_path, namespace="taskfoundry"), docker_client)


# ---- submissions that attack the grader from inside pytest --------------------------------
# Each is graded with the static scan's hits dropped (it refuses them all since issue 56:
# names built from pieces, __import__, computed getattr; tests/test_feature_unit.py), so that
# the runtime guard is what stops it; the plain spellings are the scan's to catch.
FORGE_REPORTS = """
_reports = __import__("importlib").import_module("_py" + "test.reports")
_make = _reports.TestReport.from_item_and_call


def _passed(item, call):
    report = _make(item, call)
    report.outcome, report.longrepr = "passed", None
    return report


_reports.TestReport.from_item_and_call = _passed
"""
PEEK_EXPECTED = """
def slugify(title, separator="-", max_length=40):
    caller = getattr(__import__("sys"), "_get" + "frame")(1)
    return getattr(caller, "f_" + "locals")["expected"]
"""
EXIT_AFTER_FORGED_JUNIT = """
_cases = "".join(
    '<testcase classname="%s" name="%s" />' % tuple(t.rsplit(".", 1)) for t in {tests!r}
)
with open("/tmp/tf-results.xml", "w") as _out:
    _out.write('<testsuites><testsuite name="pytest" tests="%d">%s</testsuite></testsuites>'
               % ({count}, _cases))
getattr(__import__("os"), "_ex" + "it")(0)
"""
REGISTER_HOOK = """
def _register():
    tb = __import__("traceback")
    for frame, _ in getattr(tb, "walk_" + "stack")(None):
        config = getattr(frame, "f_" + "locals").get("config")
        if config is not None and hasattr(config, "pluginmanager"):
            break
    else:
        return

    def makereport(item, call):
        result = yield
        result.outcome, result.longrepr = "passed", None
        return result

    opts = {"wrapper": True, "hookwrapper": False, "optionalhook": False, "tryfirst": True}
    setattr(makereport, "py" + "test_impl", {**opts, "trylast": False, "specname": None})
    plugin = type("Helper", (), {"py" + "test_runtest_makereport": staticmethod(makereport)})()
    config.pluginmanager.register(plugin, "helper")


_register()
"""
PLAIN_PEEK = """
import sys


def slugify(title, separator="-", max_length=40):
    return sys._getframe(1).f_locals["expected"]
"""


def _tar(files: dict[str, bytes], dest: Path) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    dest.write_bytes(buf.getvalue())
    return dest


def _past_the_scan(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The scan's hits dropped (what it watches kept): the layers after it are what is tested."""
    original = scan.scan_submission
    monkeypatch.setattr(scan, "scan_submission", lambda *a, **k: scan.Scan([], original(*a, **k).watch))


def _graded(task_dir: Path, submission: Path, docker_client, isolate: bool = True):  # type: ignore[no-untyped-def]
    config = EvalConfig(isolate=isolate)
    result = grade_feature(task_dir, submission, config, docker_client)
    tests = load_json_model(task_dir / "tests.json", TestsJson)
    return result, score_task(task_dir.name, tests.expected(), result, config.near_resolved)


def test_attacks_on_pytest_from_inside_resolve_nothing(
    featlib_tasks: list[Path], docker_client, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    one, two = featlib_tasks
    start = _members(start_state_submission(one, docker_client, tmp_path / "start.tar.gz"))
    stub = start["featlib/slug.py"]
    task = _task(one)
    forged_junit = EXIT_AFTER_FORGED_JUNIT.format(tests=task.f2p + task.p2p, count=len(task.f2p + task.p2p))
    cases = {
        # level 1: the start state (stubs) plus the attack; level 2: the attack is the module
        "forge_reports": (one, {**start, "featlib/slug.py": stub + FORGE_REPORTS.encode()}),
        "peek_expected": (one, {**start, "featlib/slug.py": stub + PEEK_EXPECTED.encode()}),
        "exit_after_forged_junit": (one, {**start, "featlib/slug.py": stub + forged_junit.encode()}),
        "register_hook": (two, {"featlib/slug.py": REGISTER_HOOK.encode()}),
        "plain_peek": (two, {"featlib/slug.py": PLAIN_PEEK.encode()}),
    }
    verdicts = {}
    for name, (task_dir, files) in cases.items():
        with monkeypatch.context() as patch:
            if name != "plain_peek":
                _past_the_scan(patch)
            result, score = _graded(task_dir, _tar(files, tmp_path / f"{name}.tar.gz"), docker_client)
        assert not score.resolved and score.passed == 0, name
        verdicts[name] = (result.error_code, result.error_details or "")
    assert verdicts["forge_reports"][0] == "grader_tampering"
    assert "_pytest.reports.TestReport.from_item_and_call" in verdicts["forge_reports"][1]
    assert verdicts["peek_expected"][0] == "grader_tampering"
    assert "refused sys._getframe at /workspace/featlib/slug.py" in verdicts["peek_expected"][1]
    assert verdicts["exit_after_forged_junit"][0] == "incomplete_run"
    assert verdicts["register_hook"][0] == "grader_tampering"
    # walk_stack looks at frames for the submitted line that called it: refused before the hook is added
    assert "refused sys._getframe at /workspace/featlib/slug.py" in verdicts["register_hook"][1]
    assert verdicts["plain_peek"][0] == "forbidden_code"
    assert "featlib/slug.py:6: frame access: return sys._getframe(1)" in verdicts["plain_peek"][1]


def test_without_the_guard_an_attack_resolves(
    featlib_tasks: list[Path], docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The hook registration above, graded with `isolate: false` (no scan, no guard): it forges
    every outcome, so the guard's verdict is what stops it, not a failing test."""
    submission = _tar({"featlib/slug.py": REGISTER_HOOK.encode()}, tmp_path / "hook.tar.gz")
    result, score = _graded(featlib_tasks[1], submission, docker_client, isolate=False)
    assert result.error_code is None and score.resolved


def test_level_two_task_its_solution_does_not_resolve_is_dropped(
    featlib_tasks: list[Path], docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad" / featlib_tasks[1].name
    shutil.copytree(featlib_tasks[1], bad)
    # the reference module with one behaviour changed: every F2P test of unique_slug fails
    reference = _members(bad / "solution.tar.gz")["featlib/slug.py"].decode()
    wrong = reference.replace("n += 1", "n += 2")
    assert wrong != reference
    _tar({"featlib/slug.py": wrong.encode()}, bad / "solution.tar.gz")
    why, found = self_check(bad, [], EvalConfig(), docker_client, tmp_path / "scratch")
    assert why is not None and why.startswith("reference_unresolved:") and "test_unique_slug" in why
    assert found["start_state"] != "resolved" and found["empty"] != "resolved"


def test_package_self_check_passed_and_reported(featlib_tasks: list[Path]) -> None:
    for task_dir in featlib_tasks:
        report = json.loads((task_dir / "reports" / "feature.json").read_text())
        checked = report["selfcheck"]
        assert checked["reference"] == "resolved" and checked["leak_scan"] == "clean"
        assert checked["start_state"] != "resolved" and checked["empty"] != "resolved"
        assert report["selfcheck_dropped"] == {}


def test_leak_scan_finds_removed_code_outside_the_workspace(featlib_tasks: list[Path], docker_client) -> None:  # type: ignore[no-untyped-def]
    task = _task(featlib_tasks[0])
    # lines of the removed feature: only the reference image's workspace holds them
    lines = [
        "if len(out) + len(separator) + len(part) > max_length:",
        'while f"{base}{separator}{n}" in taken:',
        'base = slugify(title, separator) or "item"',
    ]
    assert leaks(task.images.task_cleanroom, lines, docker_client) == []
    found = leaks(task.images.task, lines, docker_client)
    assert found and found[0][0] == "/workspace/featlib/slug.py"


def test_return_types_recorded_from_the_reference(featlib_tasks: list[Path]) -> None:
    task = _task(featlib_tasks[0])
    assert set(task.return_types) == set(task.f2p)
    # what each F2P test's run must show: here the returns to the test's own code, one each
    assert set(task.return_values) == set(task.f2p) == set(task.values_direct)
    assert all(len(v) == 1 and v[0].startswith("featlib.slug:") for v in task.return_values.values())
    assert all(
        t == {"featlib.slug:slugify": ["builtins.str"]}
        for k, t in task.return_types.items()
        if "slugify" in k
    )


# ---- each attack class as a real submission, graded with the defences on and off -------------
# (isolate: false grades as a naive grader would: `python -m pytest` from the workspace, the
# files readable, no scan, guard or type checks: the attack must work there, or it shows nothing;
# defended, the scan's hits are dropped: it refuses every one of these, see the unit tests)
HOSTILE = {
    # attack: (F2P tests it passes undefended, at least; resolves undefended)
    "always_equal": (11, True),
    "always_equal_plain": (11, True),
    "always_equal_list": (11, True),
    "pytest_shadow": (11, True),
    "stdlib_shadow_json": (11, True),
    "stdlib_shadow_argparse": (11, True),
    "read_tests_from_disk": (11, True),
    "code_objects": (8, False),  # the parametrized tests' values (marks) and code constants
    "frames_walk_tb": (5, False),  # the tests whose expected value is a local
    "frames_logging_currentframe": (5, False),
}


@pytest.fixture(scope="module")
def start_l1(featlib_tasks: list[Path], docker_client) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    return start_state_files(_task(featlib_tasks[0]).images.task_cleanroom, docker_client)


@pytest.mark.parametrize("defended", [True, False], ids=["defended", "undefended"])
@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_hostile_submission(
    attack: str,
    defended: bool,
    featlib_tasks: list[Path],
    start_l1: dict[str, bytes],
    docker_client,
    tmp_path: Path,
    monkeypatch,
) -> None:  # type: ignore[no-untyped-def]
    task_dir = featlib_tasks[0]
    task = _task(task_dir)
    _past_the_scan(monkeypatch)
    submission = _tar(attacks.make(attack, start_l1).files, tmp_path / f"{attack}.tar.gz")
    result, score = _graded(task_dir, submission, docker_client, isolate=defended)
    f2p = sum(1 for t in result.test_results if t.name in task.f2p and t.status == "passed")
    least, resolves = HOSTILE[attack]
    if defended:
        assert (f2p, score.resolved) == (0, False), result.error_details
        verdicts = {result.error_code} | {(t.extra or {}).get("error_code") for t in result.test_results}
        stopped = verdicts & {"grader_tampering", "wrong_type", "unproven"}
        assert stopped or "shadow" in attack, verdicts  # a shadow is never loaded: no verdict needed
    else:
        assert f2p >= least and score.resolved == resolves and result.error_code is None


def test_shadows_are_not_loaded_even_past_the_scan(
    featlib_tasks: list[Path], start_l1: dict[str, bytes], docker_client, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The scan's hits dropped: the safe path alone keeps pytest.py and json.py unloaded."""
    _past_the_scan(monkeypatch)
    for attack in ("pytest_shadow", "stdlib_shadow_json"):
        submission = _tar(attacks.make(attack, start_l1).files, tmp_path / f"{attack}.tar.gz")
        result, score = _graded(featlib_tasks[0], submission, docker_client)
        assert not score.resolved and result.error_code is None
        assert all(t.status != "passed" for t in result.test_results if t.name in _task(featlib_tasks[0]).f2p)


# ---- issue 56: attacks on where the verdict is made, each with its defences on and off -------
# (the scan's hits dropped throughout: these attacks are spelled past it, and the layers after
# it are what is shown; `host_checks_off` keeps the guard in the container but reads its
# records as before this issue: every record, no values compared, an empty type list fine)
VERDICT_ATTACKS = {
    # attack: (resolves with the host checks off, F2P passed undefended at least, resolves undefended)
    "runtest_noop": (True, 11, True),
    "forge_guesses": (True, 11, True),  # on: 2 F2P (answer "") if "seen" sufficed; exactly: 0
    "forge_atexit": (True, 11, True),
    "forge_thread": (True, 11, True),
    "forge_signal": (False, 11, True),  # its laundered handler is refused by the guard itself
    "guard_state_edit": (True, 11, True),  # the tamper check blinded: only the values decide
    "frames_exec_laundered": (False, 5, False),  # the tests whose expected value is a local
    "frames_renumbered": (False, 5, False),
}


def _host_checks_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    parse = guard.parse
    monkeypatch.setattr(guard, "parse", lambda data: parse(data, until_end=False))
    monkeypatch.setattr(guard, "unproven", lambda *a: None)
    monkeypatch.setattr(guard, "wrong_types", lambda *a: None)


@pytest.mark.parametrize("defence", ["on", "host_checks_off", "off"])
@pytest.mark.parametrize("attack", sorted(VERDICT_ATTACKS))
def test_verdict_attack(
    attack: str,
    defence: str,
    featlib_tasks: list[Path],
    start_l1: dict[str, bytes],
    docker_client,
    tmp_path: Path,
    monkeypatch,
) -> None:  # type: ignore[no-untyped-def]
    task_dir = featlib_tasks[0]
    task = _task(task_dir)
    _past_the_scan(monkeypatch)
    if defence == "host_checks_off":
        _host_checks_off(monkeypatch)
    submission = _tar(attacks.make(attack, start_l1).files, tmp_path / f"{attack}.tar.gz")
    result, score = _graded(task_dir, submission, docker_client, isolate=defence != "off")
    f2p = sum(1 for t in result.test_results if t.name in task.f2p and t.status == "passed")
    verdicts = {result.error_code} | {(t.extra or {}).get("error_code") for t in result.test_results}
    host_off, least, resolves = VERDICT_ATTACKS[attack]
    if defence == "on":
        assert (f2p, score.resolved) == (0, False), (verdicts, result.error_details)
        assert verdicts & {"grader_tampering", "unproven", "type_unobserved", "guard_unrecorded"}, verdicts
    elif defence == "host_checks_off":
        assert score.resolved == host_off, (verdicts, result.error_details)
        if not host_off:  # the guard in the container: the laundered code is submitted code to it
            assert result.error_code == "grader_tampering", verdicts
            assert "<code outside any module" in (result.error_details or "") or (
                "featlib/slug.py:1" in (result.error_details or "")
            ), result.error_details
    else:
        assert f2p >= least and score.resolved == resolves and result.error_code is None, (
            f2p,
            verdicts,
        )
