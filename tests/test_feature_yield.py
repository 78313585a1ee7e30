"""Regression tests for the feature kind's yield: packages whose reference failed its own grading."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

from taskfoundry.assets.feature import feature_unshadow
from taskfoundry.assets.feature.feature_types import Watch
from taskfoundry.grading.models import EvaluationResult, TestResult
from taskfoundry.kinds.feature import evidence, guard


def _touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_unshadow_leaves_the_standard_librarys_submodule_named_like_the_project(tmp_path: Path) -> None:
    """parse's start image lost urllib/parse.py (every `parse.py` under /usr was removed as a copy
    of the project `parse`): its grader's boot failed with `No module named 'urllib.parse'`."""
    stdlib, site = tmp_path / "lib" / "python3.13", tmp_path / "venv" / "site-packages"
    keep = [
        _touch(stdlib / "urllib" / "parse.py"),
        _touch(site / "other" / "parse.py"),
        _touch(site / "other" / "parse" / "__init__.py"),
    ]
    gone = [
        _touch(site / "parse.py"),
        _touch(site / "parse" / "__init__.py"),
        _touch(site / "pip" / "_vendor" / "parse.py"),
        _touch(stdlib / "parse.cpython-313-x86_64-linux-gnu.so"),
    ]
    roots = [str(stdlib), str(site)]
    found = feature_unshadow.copies(["parse"], roots, roots)
    assert found == sorted(str(p.resolve()) for p in [gone[0], site / "parse", gone[2], gone[3]])
    feature_unshadow.remove(found)
    assert all(p.exists() for p in keep) and not any(p.exists() for p in gone)


def test_unshadow_removes_a_wheel_holding_the_project(tmp_path: Path) -> None:
    import zipfile

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "parse-1.0-py3-none-any.whl", "w") as whl:
        whl.writestr("parse/__init__.py", "")
    with zipfile.ZipFile(wheels / "other-1.0-py3-none-any.whl", "w") as whl:
        whl.writestr("other/parse.py", "")
    found = feature_unshadow.copies(["parse"], [], [str(wheels)])
    assert found == [str((wheels / "parse-1.0-py3-none-any.whl").resolve())]


def test_unshadow_runs_as_the_start_images_command(tmp_path: Path) -> None:
    """The command the start image runs (`python -I -c SCRIPT TOPS`) works as a script."""
    from taskfoundry.assets import asset

    script = asset("feature/feature_unshadow.py").decode()
    done = subprocess.run([sys.executable, "-I", "-c", script, "no_such_top_xyz"], capture_output=True)
    assert done.returncode == 0, done.stderr


def _obs(name: str, value: object) -> tuple[str, str]:
    from taskfoundry.assets.feature.feature_types import evidence, typed_evidence

    return evidence(name, value), typed_evidence(name, value)


def test_a_value_that_varies_between_reference_runs_is_required_by_its_type() -> None:
    """marshmallow's test User has a uuid1() and a datetime.now(): each Schema.dump of it
    differs, and the reference's own grading called its tests `unproven`."""
    dumps = [_obs("m:Schema.dump", {"uid": str(uuid.uuid1()), "name": "Monty"}) for _ in range(2)]
    name = _obs("m:Field.serialize", "Monty")
    runs = [
        {
            "t.a": {"all": [*dumps[i], *name], "direct": [*dumps[i], *name]},
            "t.b": {"all": list(name), "direct": []},
        }
        for i in range(2)
    ]
    settled = evidence.settle(runs)
    assert settled["t.a"] == {"direct": True, "values": sorted([dumps[0][1], name[0]])}
    assert settled["t.b"] == {"direct": False, "values": [name[0]]}
    assert evidence.loose_names(settled["t.a"]["values"]) == {"m:Schema.dump"}
    # the same runs: nothing varies, values as before
    assert evidence.settle([runs[0], runs[0]])["t.a"]["values"] == sorted([dumps[0][0], name[0]])


def test_types_that_vary_too_are_required_as_shown_not_exactly() -> None:
    first, second = _obs("m:f", 1), _obs("m:f", "one")
    required, exact = evidence.settle_one([[*first, *_obs("m:g", 2)], [*second, *_obs("m:g", 2)]])
    assert not exact and required == [_obs("m:g", 2)[0]]
    # a test recorded in only one run (it failed the other) gets nothing
    assert evidence.settle([{"t.a": {"all": list(first), "direct": []}}, {}]) == {}


def _unproven(claimed: list[str], required: dict[str, list[str]]) -> str:
    stream = b'{"k": "start"}\n' + json.dumps({"k": "direct", "id": "t.a", "values": claimed}).encode()
    result = EvaluationResult(task_id="t", solution_branch="s", test_branches=["b"])
    result.test_results = [TestResult(name="t.a", branch="b", status="passed")]
    guard.unproven(result, "b", guard.parse(stream + b'\n{"k": "end"}\n'), required, {"t.a"})
    return result.test_results[0].status


def test_the_guard_reports_types_of_loose_functions_and_the_host_compares_like_with_like() -> None:
    def dump() -> dict[str, str]:
        return {"uid": str(uuid.uuid4())}

    watch = Watch(loose=frozenset({"m:dump"}))
    watch.names, watch.current = {dump.__code__: "m:dump"}, "t.a"
    watch._returned(dump.__code__, 0, dump())  # what sys.monitoring (3.12+) calls on a return
    seen, _ = watch.take_values("t.a")
    typed = [o for o in seen if "~" in o]
    assert len(seen) == 2 and len(typed) == 1
    # the reference's values varied: its type is required, whatever value this run returned
    assert _unproven(seen, {"t.a": typed}) == "passed"
    # still exactly: a claimed type besides, or a missing one, fails
    assert _unproven([*seen, _obs("m:dump", [1])[1]], {"t.a": typed}) == "failure"
    assert _unproven([o for o in seen if o not in typed], {"t.a": typed}) == "failure"
    # a function not loose in this test is compared by value (its type reported besides is left out)
    assert _unproven(seen, {"t.a": [o for o in seen if o not in typed]}) == "passed"
