"""The feature kind's rules without Docker: tested objects, extraction, gates, composition, prompt."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskfoundry.assets.feature import feature_compose, feature_guard_run, feature_types
from taskfoundry.grading.records import EvalStepError
from taskfoundry.kinds.feature import attacks, guard
from taskfoundry.kinds.feature.env import split_files
from taskfoundry.kinds.feature.extract import STUB, FileTrace, extract, removed_lines
from taskfoundry.kinds.feature.generate import (
    COLLECTION,
    candidate,
    choose_p2p,
    object_keys,
    starts_processes,
)
from taskfoundry.kinds.feature.objects import Project
from taskfoundry.kinds.feature.objects import tested_objects as objects_of
from taskfoundry.kinds.feature.package import is_test_path, render_prompt
from taskfoundry.kinds.feature.requirements import _parse
from taskfoundry.kinds.feature.results import Candidate, CandidatesStage, EnvStage, TestCase
from taskfoundry.kinds.feature.review import review_stage
from taskfoundry.kinds.feature.scan import scan_submission
from taskfoundry.kinds.feature.selfcheck import leak_lines
from taskfoundry.kinds.feature.settings import FeatureConfig, FeatureSettings

FEATLIB = Path(__file__).resolve().parents[1] / "examples" / "featlib"
TS = "featlib/textstats.py"


def test_tested_objects_named_like_the_file() -> None:
    project = Project(FEATLIB)
    assert {r.key for r in objects_of(project, "tests/test_textstats.py")} == {
        "featlib.textstats:TextStats",
        "featlib.textstats:summarize",
    }
    assert [r.kind for r in objects_of(project, "tests/test_slug.py")] == ["function", "function"]


def test_tested_objects_follow_module_imports_and_leave_test_utilities(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    shutil.copytree(FEATLIB, repo)
    # no module named like the file: the objects used inside assertions are taken; the
    # helper defined in the test file itself and the conftest fixture are not the project's
    (repo / "tests" / "test_misc.py").write_text(
        "import featlib.slug as s\nfrom featlib import util\n\n"
        "def helper():\n    return util.clamp(1, 0, 2)\n\n"
        "def test_a(sample_text):\n    helper()\n    assert s.slugify(sample_text)\n"
    )
    project = Project(repo)
    assert [r.key for r in objects_of(project, "tests/test_misc.py")] == ["featlib.slug:slugify"]


def test_tested_objects_through_star_imports(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "from .more import *\n",
        "pkg/more.py": "def chunked(xs, n):\n    return [xs[i : i + n] for i in range(0, len(xs), n)]\n",
        "tests/test_more.py": "import pkg as mi\n\ndef test_c():\n    assert mi.chunked([1, 2, 3], 2)\n",
    }
    _write(tmp_path, files)
    assert [r.key for r in objects_of(Project(tmp_path), "tests/test_more.py")] == ["pkg.more:chunked"]


def _trace(calls: list[str], edges: list[tuple[str, str]] = ()) -> FileTrace:  # type: ignore[assignment]
    return FileTrace(frozenset(calls), frozenset(edges))


def test_extract_stubs_the_interface_and_deletes_private_callees() -> None:
    project = Project(FEATLIB)
    tops = objects_of(project, "tests/test_textstats.py")
    calls = [f"{TS}::TextStats.tokens", f"{TS}::TextStats.top_words", f"{TS}::_rank", f"{TS}::_strip_stop"]
    edges = [
        (f"{TS}::TextStats.top_words", f"{TS}::_rank"),
        (f"{TS}::TextStats.tokens", f"{TS}::_strip_stop"),
    ]
    ex = extract(FEATLIB, tops, _trace(calls, edges), {"featlib/util.py::words"}, cap=1000)
    text = ex.stripped[TS]
    assert "def _rank" not in text and "def _strip_stop" not in text  # private callees deleted
    assert "def _ngrams" in text  # not reached by the F2P tests: stays
    assert "def top_words(self, k: int = 3) -> list[tuple[str, int]]:" in text
    assert "The `k` most frequent words" in text and STUB in text  # docstring kept, body gone
    assert "return _rank(Counter(self.tokens()))[:k]" not in text
    assert "def reading_minutes" in text and "return -(-count // wpm)" in text  # not traced: kept
    compile(text, TS, "exec")
    names = [i.name for i in ex.interface]
    assert names[0] == "TextStats" and {"TextStats.top_words", "TextStats.tokens"} <= set(names)
    assert ex.removed_lines == removed_lines((FEATLIB / TS).read_text(), text) > 0


def test_extract_keeps_what_p2p_reaches_and_caps() -> None:
    project = Project(FEATLIB)
    tops = objects_of(project, "tests/test_slug.py")
    calls = ["featlib/slug.py::slugify", "featlib/slug.py::unique_slug"]
    ex = extract(FEATLIB, tops, _trace(calls), {"featlib/slug.py::slugify"}, cap=1000)
    assert [i.name for i in ex.interface] == ["unique_slug"]
    assert ex.skipped == ["featlib.slug:slugify"]
    capped = extract(FEATLIB, tops, _trace(calls), set(), cap=5)
    assert capped.capped and not capped.stripped


def test_p2p_files_reach_no_tested_object() -> None:
    # a P2P file calling a tested object would keep it (nothing removed): left out; of the
    # rest, those calling into the F2P tests' source files first
    traces = {
        "t/test_slug.py": _trace(["p/slug.py::slugify", "p/slug.py::_norm", "p/util.py::clamp"]),
        "t/test_calls_top.py": _trace(["p/slug.py::slugify"]),
        "t/test_shares.py": _trace(["p/slug.py::_norm", "p/util.py::clamp"]),
        "t/test_near.py": _trace(["p/slug.py::other"]),
        "t/test_far.py": _trace(["p/far.py::x"]),
    }
    project = Project(FEATLIB)
    tops = objects_of(project, "tests/test_slug.py")
    assert object_keys(tops, frozenset({"featlib/slug.py::slugify", "featlib/slug.py::slugify_x"})) == {
        "featlib/slug.py::slugify"
    }
    passing = sorted(traces)
    tested = frozenset({"p/slug.py::slugify"})
    chosen = choose_p2p("t/test_slug.py", passing, traces, 8, tested)
    assert chosen == ["t/test_shares.py", "t/test_near.py", "t/test_far.py"]
    assert choose_p2p("t/test_slug.py", passing, traces, 1, tested) == ["t/test_shares.py"]


def test_code_run_at_import_stays() -> None:
    # build_defaults runs when featlib is imported: no test calls it, every test needs it
    files = ["tests/test_defaults.py", "tests/test_slug.py"]
    traces = {
        "tests/test_defaults.py": _trace(["featlib/defaults.py::build_defaults"]),
        "tests/test_slug.py": _trace(["featlib/slug.py::slugify"]),
    }
    settings = FeatureSettings.model_construct(feature=FeatureConfig())
    cand = candidate(Project(FEATLIB), files[0], files, traces, settings, "defaults")
    assert cand.dropped is None and cand.removed_lines > 0
    traces[COLLECTION] = _trace(["featlib/defaults.py::build_defaults"])
    cand = candidate(Project(FEATLIB), files[0], files, traces, settings, "defaults")
    assert cand.dropped == "nothing_removed"


def test_private_helpers_named_at_import_are_stubbed_not_deleted(tmp_path: Path) -> None:
    # tabulate's format table names its line helpers at import: deleted, every import failed
    files = {
        "pkg/__init__.py": "",
        "pkg/fmt.py": (
            "def _line(w):\n    return '-' * w\n\n\ndef _pad(s):\n    return s + ' '\n\n\n"
            "TABLE = {'line': _line}\n\n\ndef render(w):\n    return _pad(TABLE['line'](w))\n"
        ),
        "tests/test_fmt.py": "from pkg.fmt import render\n\ndef test_r():\n    assert render(2)\n",
    }
    _write(tmp_path, files)
    tops = objects_of(Project(tmp_path), "tests/test_fmt.py")
    calls = ["pkg/fmt.py::render", "pkg/fmt.py::_line", "pkg/fmt.py::_pad"]
    edges = [("pkg/fmt.py::render", "pkg/fmt.py::_line"), ("pkg/fmt.py::render", "pkg/fmt.py::_pad")]
    text = extract(tmp_path, tops, _trace(calls, edges), set(), cap=100).stripped["pkg/fmt.py"]
    assert "def _pad" not in text and "def _line(w):" in text and "return '-' * w" not in text
    exec(compile(text, "fmt.py", "exec"), {})  # imports


def test_test_files_starting_processes_are_no_p2p(tmp_path: Path) -> None:
    _write(tmp_path, {"a.py": "import subprocess\n", "b.py": "x = sys.executable\n", "c.py": "import os\n"})
    assert [starts_processes(tmp_path / f) for f in ("a.py", "b.py", "c.py")] == [True, True, False]


def test_split_files_leaves_out_failing_and_skipped_files() -> None:
    cases = [
        TestCase(junit="tests.test_a.t1", file="tests/test_a.py", status="passed"),
        TestCase(junit="tests.test_a.t2", file="tests/test_a.py", status="skipped"),
        TestCase(junit="tests.test_b.t1", file="tests/test_b.py", status="passed"),
        TestCase(junit="tests.test_b.t2", file="tests/test_b.py", status="failure"),
        TestCase(junit="tests.test_c.t1", file="tests/test_c.py", status="skipped"),
        TestCase(junit="pkg.mod.doctest", file="pkg/mod.py", status="passed"),
    ]
    passing, failing = split_files(cases)
    assert passing == ["tests/test_a.py"]
    assert failing == {"tests/test_b.py": "1 of 2 tests fail", "tests/test_c.py": "every test is skipped"}


def test_review_gates(tmp_path: Path) -> None:
    env = EnvStage(
        image="i",
        built=False,
        repo=tmp_path,
        project="p",
        requirements=[],
        passing_files=[],
        failing_files={},
        tests=[TestCase(junit=f"t.test_a.t{i}", file="t/test_a.py", status="passed") for i in range(3)],
    )
    cands = [
        Candidate(name="a", f2p_file="t/test_a.py", p2p_files=[], removed_lines=50),
        Candidate(name="b", f2p_file="t/test_a.py", p2p_files=[], removed_lines=5),
        Candidate(name="c", f2p_file="t/test_a.py", p2p_files=[], dropped="no_tested_objects", detail="x"),
    ]
    gen = CandidatesStage(
        env=env, traced_tests=3, candidates=cands, config=FeatureConfig(min_removed_lines=10, min_f2p=3)
    )
    review = review_stage(gen)
    assert review.kept == ["a"]
    assert review.dropped["b"].startswith("too_few_removed_lines") and review.dropped["c"].startswith(
        "no_tested"
    )
    strict = gen.model_copy(
        update={"config": FeatureConfig()}
    )  # ACE-Bench's defaults: > 100 lines, >= 10 F2P
    assert review_stage(strict).kept == []


def test_requirement_markers_for_the_image_python() -> None:
    assert _parse('tomli>=1; python_version < "3.11"') is None
    assert _parse('hypothesis>=6; extra == "test"') == "hypothesis>=6"
    assert _parse('sphinx; extra == "docs"') is None
    assert _parse("pkg @ https://example.invalid/pkg.whl") is None


@pytest.mark.parametrize(
    ("path", "restored"),
    [
        ("tests/test_x.py", True),
        ("tests/data/a.json", True),
        ("pkg/conftest.py", True),
        ("pyproject.toml", True),
        ("test_root.py", True),
        ("pkg/mod.py", False),
        ("docs/pyproject.toml", False),
    ],
)
def test_is_test_path(path: str, restored: bool) -> None:
    assert is_test_path(path) is restored


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_compose_restores_tests_and_appends_level_two_modules(tmp_path: Path) -> None:
    ws, sub = tmp_path / "ws", tmp_path / "sub"
    _write(
        ws,
        {
            "eval/restore/tests/test_a.py": "real test\n",
            "eval/restore/pyproject.toml": "real\n",
            "eval/base/pkg/mod.py": "def f():\n    raise NotImplementedError\n",
            "eval/base/pkg/other.py": "x = 1\n",
        },
    )
    _write(
        sub,
        {
            "pkg/mod.py": "from __future__ import annotations\ndef f():\n    return 1\n",
            "pkg/new.py": "y = 2\n",
            "tests/test_a.py": "forged\n",
            "tests/conftest.py": "forged\n",
            "pkg/conftest.py": "forged\n",
            "pyproject.toml": "forged\n",
            "eval/restore/tests/test_a.py": "forged\n",
        },
    )
    feature_compose.main(2, str(sub), str(ws))
    assert (ws / "tests/test_a.py").read_text() == "real test\n"
    assert (ws / "pyproject.toml").read_text() == "real\n"
    assert not (ws / "tests/conftest.py").exists() and not (ws / "pkg/conftest.py").exists()
    assert (ws / "eval/restore/tests/test_a.py").read_text() == "real test\n"
    module = (ws / "pkg/mod.py").read_text()
    assert module.startswith("def f():\n    raise NotImplementedError") and module.endswith("    return 1\n")
    assert "from __future__" not in module
    assert module.split("\n").index("    return 1") == module.split("\n").index("# ---- submitted ----") + 3
    namespace: dict[str, object] = {}
    exec(module, namespace)  # the submitted definition replaces the stub
    assert namespace["f"]() == 1  # type: ignore[operator]
    assert (ws / "pkg/other.py").read_text() == "x = 1\n" and (ws / "pkg/new.py").read_text() == "y = 2\n"


def test_compose_level_one_takes_the_submission_whole(tmp_path: Path) -> None:
    ws, sub = tmp_path / "ws", tmp_path / "sub"
    _write(ws, {"eval/restore/tests/test_a.py": "real\n"})
    _write(sub, {"pkg/mod.py": "z = 3\n", "tests/extra_helper.py": "forged\n"})
    (sub / "link.py").symlink_to("/etc/passwd")
    feature_compose.main(1, str(sub), str(ws))
    assert (ws / "pkg/mod.py").read_text() == "z = 3\n"
    assert not (ws / "tests/extra_helper.py").exists()  # the reference's test directory only
    assert not (ws / "link.py").exists()


def test_prompt_levels() -> None:
    from taskfoundry.kinds.feature.results import InterfaceObject

    obj = InterfaceObject(
        name="slugify",
        module="featlib.slug",
        file="featlib/slug.py",
        kind="function",
        signature="def slugify(title: str) -> str:",
        docstring="A URL-safe slug.",
    )
    values = dict(
        project="featlib",
        repository="local/featlib",
        interface=[obj],
        imports=["from featlib.slug import slugify"],
        test_command="python -m pytest t.py",
        test_timeout=60,
    )
    one, two = render_prompt(level=1, **values), render_prompt(level=2, **values)
    for text in (one, two):
        assert "def slugify(title: str) -> str:" in text and "A URL-safe slug." in text
        assert "from featlib.slug import slugify" in text
    assert "/workspace" in one and "from scratch" in two and "from scratch" not in one


HOSTILE_LINES = {
    "import sys\nx = sys._getframe(1).f_locals\n": {"frame access"},
    "import inspect as i\nx = i.stack()\n": {"frame access"},
    "import _pytest.runner\n": {"pytest/pluggy internals"},
    "from pluggy import HookimplMarker\n": {"pytest/pluggy internals"},
    "def pytest_runtest_makereport(item, call):\n    pass\n": {"pytest/pluggy internals"},
    "import gc\nr = gc.get_referrers(object)\n": {"gc referrers"},
    "import sys\nsys.settrace(None)\n": {"trace/profile hook"},
    "import os\nos._exit(0)\n": {"os._exit"},
    "from os import _exit\n": {"os._exit"},
    "import sys\nsys.modules['x'] = None\n": {"sys.modules/builtins tampering"},
    "import builtins\n": {"sys.modules/builtins tampering"},
    "x = getattr(__import__('sys'), '_getframe')\n": {"frame access", "dynamic import"},
    "try:\n    1 / 0\nexcept Exception as e:\n    f = e.__traceback__.tb_frame\n": {"frame access"},
}


@pytest.mark.parametrize("code", list(HOSTILE_LINES))
def test_scan_names_what_reaches_for_the_grader(code: str) -> None:
    found = scan_submission(1, {"pkg/mod.py": code.encode()}, {}, set())
    assert {h.rule for h in found.hits} == HOSTILE_LINES[code]
    assert all(h.path == "pkg/mod.py" for h in found.hits)


def test_scan_reads_only_what_the_submission_adds() -> None:
    legit = "import inspect, sys\n\ndef caller():\n    return sys._getframe(1).f_code.co_name\n"
    start = {"pkg/mod.py": legit.encode(), "pkg/old.py": b"import inspect\nS = inspect.stack\n"}
    added = legit + "\ndef feature(x):\n    return sorted(x)\n"
    same = scan_submission(1, {"pkg/mod.py": added.encode(), "pkg/old.py": start["pkg/old.py"]}, start, set())
    assert same.hits == [] and same.watch == {"pkg/mod.py": [6, 7, 8]}
    sneaky = added + "\ndef peek():\n    return inspect.currentframe().f_back.f_locals\n"
    (hit,) = scan_submission(1, {"pkg/mod.py": sneaky.encode()}, start, set()).hits
    assert (hit.line, hit.rule) == (10, "frame access")
    # files the grader replaces from the reference (tests, conftests) are never run as sent
    forged = {"tests/conftest.py": b"import _pytest\n", "pkg/mod.py": legit.encode()}
    assert scan_submission(1, forged, start, {"tests/conftest.py"}).hits == []
    # a compiled module cannot be read, so it cannot be admitted
    (binary,) = scan_submission(1, {"pkg/_x.cpython-313-x86_64-linux-gnu.so": b"\x7fELF"}, {}, set()).hits
    assert binary.rule == "unreadable module"


def test_scan_watch_lines_are_the_composed_workspace_lines(tmp_path: Path) -> None:
    ws, sub = tmp_path / "ws", tmp_path / "sub"
    base = "import sys\n\n\ndef f():\n    raise NotImplementedError\n"
    submitted = "from __future__ import annotations\nimport sys\n\n\ndef f():\n    return sys.maxsize\n"
    _write(ws, {"eval/restore/tests/test_a.py": "t\n", "eval/base/pkg/mod.py": base})
    _write(sub, {"pkg/mod.py": submitted})
    feature_compose.main(2, str(sub), str(ws))
    composed = (ws / "pkg/mod.py").read_text().split("\n")
    found = scan_submission(2, {"pkg/mod.py": submitted.encode()}, {"pkg/mod.py": base.encode()}, set())
    assert [composed[n - 1] for n in found.watch["pkg/mod.py"]] == ["", "    return sys.maxsize"]


def test_guard_stream_verdicts() -> None:
    ok = b'{"k": "start"}\n{"k": "report", "id": "t.a", "when": "call", "outcome": "passed"}\n{"k": "end"}\n'
    assert guard.parse(ok).verdict() is None and guard.parse(ok).passed == {"t.a"}
    tampered = ok + b'{"k": "tamper", "stage": "collection", "changed": ["_pytest.runner.x"]}\n'
    assert guard.parse(tampered).verdict() == ("grader_tampering", "changed (collection): _pytest.runner.x")
    blocked = b'{"k": "start"}\nnot json\n{"k": "blocked", "event": "sys._getframe", "where": "m.py:3"}\n'
    assert guard.parse(blocked).verdict() == ("grader_tampering", "refused sys._getframe at m.py:3")
    code, _ = guard.parse(b'{"k": "start"}\n').verdict()  # type: ignore[misc]
    assert code == "incomplete_run"
    assert guard.parse(None).verdict() == (
        "incomplete_run",
        "the grader's plugin never started (pytest did not run)",
    )


def test_scan_refuses_comparison_methods_the_reference_does_not_define() -> None:
    start = {"pkg/m.py": b"def f():\n    raise NotImplementedError\n"}
    forged = b"class S(str):\n    def __eq__(self, other):\n        return True\n\ndef f():\n    return S()\n"
    found = scan_submission(1, {"pkg/m.py": forged}, start, set())
    assert [h.rule for h in found.hits] == ["comparison method __eq__"]
    # the reference defines the same method at that place: allowed
    assert scan_submission(1, {"pkg/m.py": forged}, start, set(), {"pkg/m.py": forged}).hits == []


def test_scan_allows_what_the_reference_has() -> None:
    """Issue 28 item 6: the project's own loader assigns to sys.modules."""
    start = {"pkg/load.py": b"import sys\n\ndef load(name):\n    raise NotImplementedError\n"}
    ref = b"import sys\n\ndef load(name):\n    sys.modules[name] = object()\n"
    assert [h.rule for h in scan_submission(1, {"pkg/load.py": ref}, start, set()).hits] == [
        "sys.modules/builtins tampering"
    ]
    assert scan_submission(1, {"pkg/load.py": ref}, start, set(), {"pkg/load.py": ref}).hits == []


@pytest.mark.parametrize(
    ("rel", "shadow"),
    [
        ("pytest.py", "pytest"),
        ("json.py", "json"),
        ("src/argparse/__init__.py", "argparse"),
        ("pkg/json.py", None),
    ],
)
def test_scan_refuses_modules_that_shadow_the_grader(rel: str, shadow: str | None) -> None:
    tree = {"pkg/__init__.py": b"", rel: b"X = 1\n"}
    hits = scan_submission(1, tree, {"pkg/__init__.py": b""}, set()).hits
    assert [h.text for h in hits if h.rule.startswith("shadows")] == ([shadow] if shadow else [])


def test_records_root_cannot_verify_are_forged() -> None:
    import hmac as hmac_

    key = b"k" * 32
    mac = hmac_.new(key, digestmod="sha256")
    lines = []
    for record in (b'{"k": "start"}', b'{"k": "end"}'):
        mac.update(record + b"\n")
        lines.append(record + b"\t" + mac.copy().hexdigest().encode())
    forged = b'{"k": "report", "id": "t", "when": "call", "outcome": "passed"}\tdeadbeef'
    good, bad = feature_guard_run.verify(key, b"\n".join([lines[0], forged, lines[1]]) + b"\n")
    assert good == [b'{"k": "start"}', b'{"k": "end"}'] and bad == [forged]
    records = guard.parse(b'{"k": "start"}\n{"k": "forged", "count": 1, "sample": "x"}\n{"k": "end"}\n')
    assert records.verdict() == ("grader_tampering", "1 records root could not verify, e.g. x")


def test_types_are_exact() -> None:
    class Sub(str):
        pass

    assert feature_types.describe("a") == "builtins.str"
    assert feature_types.describe(Sub("a")).endswith(".Sub")
    assert feature_types.describe(["a", 1]) == "builtins.list[builtins.int|builtins.str]"
    assert feature_types.describe({"a": [Sub()]}).startswith("builtins.dict[builtins.str:builtins.list[")


def test_guarded_command_runs_the_boot_not_dash_m() -> None:
    command = guard.command("/opt/tf-venv/bin/python -m pytest -q tests/test_a.py", "1000:1000")
    assert "-m pytest" not in command and "/tmp/tf-guard/boot.py" in command and "tests/test_a.py" in command
    with pytest.raises(EvalStepError, match="PYTHON -m pytest"):
        guard.command("pytest -q", "1000:1000")


def test_leak_lines_are_the_distinctive_lines_stripping_took() -> None:
    original = {"m.py": b"def f(x):\n    total_of_everything = compute_the_total(x) + 1\n    return x\n"}
    stripped = {"m.py": 'def f(x):\n    raise NotImplementedError("removed")\n    return x\n'}
    # `return x` stays in the stripped module and is short: not a sign of a leak
    assert leak_lines(original, stripped) == ["total_of_everything = compute_the_total(x) + 1"]


def test_compose_keeps_a_package_whose_tests_live_inside_it(tmp_path: Path) -> None:
    """toolz keeps its tests in toolz/tests/: only that directory is the reference's."""
    ws, sub = tmp_path / "ws", tmp_path / "sub"
    _write(ws / "eval" / "restore", {"toolz/tests/test_core.py": "def test_a():\n    pass\n"})
    _write(
        sub, {"toolz/core.py": "X = 1\n", "toolz/tests/test_core.py": "forged\n", "toolz/tests/extra.py": ""}
    )
    feature_compose.main(1, str(sub), str(ws))
    assert (ws / "toolz/core.py").read_text() == "X = 1\n"
    assert (ws / "toolz/tests/test_core.py").read_text().startswith("def test_a")
    assert not (ws / "toolz/tests/extra.py").exists()
    assert feature_compose.test_root("toolz/tests/unit/test_x.py") == "toolz/tests"
    assert feature_compose.test_root("test_top.py") is None


def test_scan_matches_the_reference_on_the_construct_not_the_line_touched() -> None:
    """more-itertools: a level-2 module defines `__contains__` the reference defines too; the
    first new line inside it is a body line, the match is on the `def`."""
    ref = (
        b"class V:\n    def __contains__(self, value):\n"
        b"        if not self.ok(value):\n            return False\n        return True\n"
    )
    start = {"m.py": b"class V:\n    pass\n"}
    assert scan_submission(2, {"m.py": ref}, start, set(), {"m.py": ref}).hits == []
    # a stub kept the `def`: filling its body is not defining a method
    stub = b"class V:\n    def __contains__(self, value):\n        raise NotImplementedError\n"
    assert scan_submission(1, {"m.py": ref}, {"m.py": stub}, set()).hits == []


def test_evidence_is_the_plain_value_containers_without_order() -> None:
    ev = feature_types.evidence
    assert ev("m:f", "a") == ev("m:f", "a") != ev("m:f", "b")
    assert ev("m:f", "a") != ev("m:g", "a") and ev("m:f", 1) != ev("m:f", True) != ev("m:f", "1")
    assert ev("m:f", [1, 2]) == ev("m:f", [2, 1]) != ev("m:f", (1, 2))
    assert ev("m:f", {"a": {1, 2}}) == ev("m:f", {"a": {2, 1}}) != ev("m:f", {"a": {1}})
    assert ev("m:f", 0.1 + 0.2) == ev("m:f", 0.3)  # approx's tolerance, not the last digit

    class Sub(str):
        pass

    # anything not plain data is its exact type only; a subclass is another type
    assert feature_types.plain(Sub("a")) is None and ev("m:f", Sub("a")) != ev("m:f", "a")
    assert feature_types.plain([object()]) is None


def _graded_records(stream: bytes, statuses: dict[str, str]):  # type: ignore[no-untyped-def]
    from taskfoundry.grading.models import EvaluationResult, TestResult

    result = EvaluationResult(task_id="t", solution_branch="s", test_branches=["b"])
    result.test_results = [TestResult(name=n, branch="b", status=s) for n, s in statuses.items()]
    return result, guard.parse(stream)


def test_f2p_pass_needs_the_reference_values_seen_before_the_end() -> None:
    reference = {"t.a": ["m:f=1", "m:f=2"], "t.b": ["m:f=3"]}
    stream = (
        b'{"k": "start"}\n{"k": "values", "id": "t.a", "values": ["m:f=1"]}\n'
        b'{"k": "values", "id": "t.a", "values": ["m:f=2", "m:f=9"]}\n{"k": "end"}\n'
        # after the session: an atexit handler's records through the guard's own signer
        b'{"k": "values", "id": "t.b", "values": ["m:f=3"]}\n'
        b'{"k": "report", "id": "t.c", "when": "call", "outcome": "failed"}\n'
    )
    result, records = _graded_records(stream, {"t.a": "passed", "t.b": "passed", "t.c": "passed"})
    assert records.ended and "t.b" not in records.values and "t.c" not in records.failed
    guard.unproven(result, "b", records, reference)
    status = {t.name: (t.status, (t.extra or {}).get("error_code")) for t in result.test_results}
    assert status == {"t.a": ("passed", None), "t.b": ("failure", "unproven"), "t.c": ("passed", None)}
    # where the reference's values reached the test's own code: exactly those, no more
    claims = b'{"k": "direct", "id": "t.a", "values": ["m:f=1", "m:f=2"]}\n'
    guess = b'{"k": "direct", "id": "t.a", "values": ["m:f=7"]}\n'
    for extra, status in ((b"", "passed"), (guess, "failure")):
        result, records = _graded_records(claims + extra, {"t.a": "passed"})
        guard.unproven(result, "b", records, reference, {"t.a"})
        assert [t.status for t in result.test_results] == [status]
    # an alarm anywhere still counts (it can only fail the run)
    assert guard.parse(stream + b'{"k": "forged", "count": 1, "sample": "x"}\n').alarms


def test_an_empty_type_list_is_nothing_seen() -> None:
    reference = {"t.a": {"m:f": ["builtins.str"]}}
    stream = b'{"k": "report", "id": "t.a", "when": "call", "outcome": "passed", "types": {"m:f": []}}\n'
    result, records = _graded_records(stream, {"t.a": "passed"})
    guard.wrong_types(result, "b", records, reference)
    assert [(t.status, (t.extra or {}).get("error_code")) for t in result.test_results] == [
        ("failure", "type_unobserved")
    ]


SLUG_START = {
    "pkg/__init__.py": b"",
    "pkg/slug.py": b"from __future__ import annotations\n\n\ndef slugify(title: str) -> str:\n"
    b'    """Doc."""\n    raise NotImplementedError("removed: implement this")\n',
}


@pytest.mark.parametrize("name", sorted(set(attacks.ATTACKS) - {"read_tests_from_disk"}))
def test_scan_refuses_every_attack_on_the_grader(name: str) -> None:
    """The Docker tests grade these with the scan's hits dropped (the layers after it are what
    they show); the scan alone refuses each (reading the tests' files is stopped by their mode)."""
    files = attacks.make(name, SLUG_START).files
    assert scan_submission(1, files, SLUG_START, set()).hits, name


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ('exec("x = 1")', "dynamic code"),
        ("run = eval", "dynamic code"),
        ('mod = __import__("os")', "dynamic import"),
        ('import importlib\nmod = importlib.import_module("os")', "dynamic import"),
        ("space = globals()", "namespace access"),
        ("def f(o, n):\n    return getattr(o, n)", "computed attribute name"),
        ('name = "_py" + "test"', "string-built name"),
        ("import atexit\natexit.register(print)", "exit or signal handler"),
        ('import base64\nbase64.b64decode(b"eA==")', "encoded payload"),
    ],
)
def test_scan_refuses_what_only_an_attack_needs(code: str, rule: str) -> None:
    start = {"pkg/m.py": b"def f():\n    raise NotImplementedError\n"}
    submitted = {"pkg/m.py": start["pkg/m.py"] + code.encode() + b"\n"}
    assert rule in [h.rule for h in scan_submission(1, submitted, start, set()).hits]
    # the reference uses the same anywhere in the file: allowed wherever the submission does
    reference = {"pkg/m.py": b"# the reference\n" + code.encode() + b"\n"}
    assert scan_submission(1, submitted, start, set(), reference).hits == []


def test_the_submission_is_held_to_the_files_and_imports_the_task_names() -> None:
    """Issue 56: with the reference known, a changed file it does not change, or an import of a
    module it never imports, is refused; a new helper beside a named file and the reference's
    own imports are not. Without the reference (the defence off) each passes."""
    start = {"pkg/__init__.py": b"", "pkg/m.py": b"import re\n\ndef f():\n    raise NotImplementedError\n"}
    reference = {
        **start,
        "pkg/m.py": b"import re\nimport json\n\ndef f():\n    return json.dumps(re.escape('a'))\n",
    }
    honest = {
        "pkg/m.py": b"import json\nimport re\nfrom pkg import _helper\n\ndef f():\n    return _helper.g()\n",
        "pkg/_helper.py": b"import json\n\ndef g():\n    return json.dumps('a')\n",
    }
    assert scan_submission(1, honest, start, set(), reference).hits == []
    planted = {"pkg/__init__.py": b"import json\nX = 1\n"}
    foreign = {"pkg/m.py": start["pkg/m.py"] + b"import _thread\nimport inspect\n"}
    elsewhere = {"other.py": b"import json\n"}
    for submitted, rules in (
        (planted, ["outside the task's files"]),
        (foreign, ["import the reference does not use"] * 2),
        (elsewhere, ["outside the task's files"]),
    ):
        assert [h.rule for h in scan_submission(1, submitted, start, set(), reference).hits] == rules
        assert scan_submission(1, submitted, start, set()).hits == []  # the defence off


def test_scan_leaves_ordinary_code_alone() -> None:
    start = {"pkg/m.py": b"def f(o):\n    raise NotImplementedError\n"}
    code = (
        b'def f(o, sep="-"):\n    name = getattr(o, "name", "")\n    out = "%s%s" % (name, sep)\n'
        b'    return out + "x" + ("a b" + "c d")\n'
    )
    assert scan_submission(1, {"pkg/m.py": code}, start, set()).hits == []


def test_validation_finds_the_tests_the_grader_would_refuse_the_reference(tmp_path: Path) -> None:
    """Run as validation runs the reference (the plugin of assets/feature/feature_types.py with
    the guard beside it): a test reading a frame while a module the reference changes is on the
    stack (click's test_chain `debug()` under Context.invoke), and a test opening its own file
    (click's termui `default=__file__`), are named; a plain test and a frame read with no
    changed module on the stack are not."""
    import json
    import os
    import subprocess
    import sys

    plugins = tmp_path / "plugins"
    plugins.mkdir()
    shutil.copy(feature_types.__file__, plugins / "tf_feature_types.py")
    shutil.copy(
        feature_types.__file__.replace("feature_types", "feature_guard"), plugins / "tf_feature_guard.py"
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "changed.py").write_text("def invoke(callback):\n    return callback()\n")
    (tmp_path / "pkg" / "kept.py").write_text("def invoke(callback):\n    return callback()\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_f2p.py").write_text(
        "import sys\nfrom pkg import changed, kept\n\n"
        "def debug():\n    return sys._getframe(1).f_code.co_name\n\n"
        "def test_frame_under_changed():\n    assert changed.invoke(debug) == 'invoke'\n\n"
        "def test_frame_under_kept():\n    assert kept.invoke(debug) == 'invoke'\n\n"
        "def test_reads_own_file():\n    assert open(__file__).read()\n\n"
        "def test_plain():\n    assert changed.invoke(lambda: 1) == 1\n"
    )
    record = tmp_path / "refused.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugins), str(tmp_path)]),
        "PYTEST_PLUGINS": "tf_feature_types",
        "TF_REFUSED_RECORD": str(record),
        "TF_SUBMITTED_FILES": json.dumps(["pkg/changed.py"]),
        "TF_VALUES_TESTS": json.dumps(["tests/test_f2p.py"]),
    }
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_f2p.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    refused = json.loads(record.read_text())
    assert sorted(refused) == [
        "tests/test_f2p.py::test_frame_under_changed",
        "tests/test_f2p.py::test_reads_own_file",
    ]
    assert (
        refused["tests/test_f2p.py::test_frame_under_changed"]["junit"]
        == "tests.test_f2p.test_frame_under_changed"
    )
    assert "sys._getframe" in refused["tests/test_f2p.py::test_frame_under_changed"]["why"]
    assert "changed.py" in refused["tests/test_f2p.py::test_frame_under_changed"]["why"]
    assert "hidden test file" in refused["tests/test_f2p.py::test_reads_own_file"]["why"]

    # what the reference does while collection imports it counts too (the guard is armed
    # before collection): arrow importing dateutil, which imports ctypes (`ctypes.dlopen`)
    (tmp_path / "pkg" / "changed.py").write_text(
        "import sys\n_here = sys._getframe(0)\n\ndef invoke(callback):\n    return callback()\n"
    )
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_f2p.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert "sys._getframe" in json.loads(record.read_text())[""]["why"]


def test_deselected_tests_leave_the_command() -> None:
    from taskfoundry.kinds.feature.runner import pytest_command

    command = pytest_command(["tests/test_a.py"], 60, deselect=["tests/test_a.py::test_x[1-2]"])
    assert "'--deselect=tests/test_a.py::test_x[1-2]'" in command
    assert command.endswith("tests/test_a.py")


def test_plugins_the_pytest_settings_name_are_requirements(tmp_path: Path) -> None:
    from taskfoundry.kinds.feature.requirements import settings_plugins

    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = "--cov=parse --cov-report=term-missing --doctest-modules"\n'
    )
    assert settings_plugins(tmp_path) == ["pytest-cov"]
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -n auto -p randomly --reruns=2\n")
    assert settings_plugins(tmp_path) == ["pytest-xdist", "pytest-rerunfailures", "pytest-randomly"]
    (tmp_path / "pytest.ini").unlink()
    (tmp_path / "pyproject.toml").write_text('[tool.pytest]\naddopts = ["-ra", "--strict-markers"]\n')
    assert settings_plugins(tmp_path) == []
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = --benchmark-skip\n")
    assert settings_plugins(tmp_path) == ["pytest-benchmark"]


def test_a_long_test_id_is_named_by_its_digest_in_the_records() -> None:
    """tomlkit's test_parse_rejects_deeply_nested_documents is parametrized with 3000-character
    documents: its record was cut at 3800 bytes, unreadable, and the reference's pass
    `guard_unrecorded`. The guard and the host name such a test by its digest."""
    import json

    from _pytest.junitxml import mangle_test_address

    from taskfoundry.assets.feature import feature_guard

    for nodeid in ("tests/test_a.py::test_x[1]", "tests/test_a.py::test_x[" + "[{a = " * 500 + "]"):
        junit = ".".join(mangle_test_address(nodeid))
        assert feature_guard._junit_id(nodeid) == feature_types.record_id(junit)
    long_id = ".".join(mangle_test_address("tests/test_a.py::test_x[" + "[{a = " * 500 + "]"))
    short = feature_types.record_id(long_id)
    assert short.startswith("sha256:") and len(short) < 100
    record = json.dumps({"k": "report", "id": short, "when": "call", "outcome": "passed"}).encode()
    result, records = _graded_records(b'{"k": "start"}\n' + record + b'\n{"k": "end"}\n', {long_id: "passed"})
    guard.unrecorded(result, "b", records)
    assert result.test_results[0].status == "passed"
