"""Mutation analysis without Docker: operators, sampling, node ids, rebuild plans, the report."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from taskfoundry import sections
from taskfoundry.builders.detect_c import autotools, cmake
from taskfoundry.builders.recipe import Recipe
from taskfoundry.errors import MutationError
from taskfoundry.kinds.program.mutate.models import MutantRecord, MutationReport
from taskfoundry.kinds.program.mutate.pool import split_evenly
from taskfoundry.kinds.program.mutate.rebuild import rebuild_plan
from taskfoundry.kinds.program.mutate.select import Planned, plan
from taskfoundry.kinds.program.mutate.session import node_id
from taskfoundry.models import load_json_model, save_json
from taskfoundry.mutation import OPERATORS
from taskfoundry.mutation.operators import mutants_of

C_SOURCE = b"""#include <stdio.h>
#define LIMIT 10
static int table[4];
int clamp(int a, int b)
{
    if (a < b && !(a == 0x1F)) {
        return a + 1;
    }
    table[0] = b * 2;
    for (int i = 0; i < 3; i++) {
        if (i >= 2)
            break;
        printf("%d\\n", i);
    }
    return 010;
}
void say(void)
{
    puts("hi");
}
"""
PY_SOURCE = b'''def f(a, b):
    """Doc."""
    if a < b and not a or b is None:
        return a + 1
    g(a)
    a += 3
    return a * 2 == 0


def g(x):
    print(x // 2, True)
'''
RUST_SOURCE = b"fn f(a: u32) -> Option<u32> { if a < 3 || !ok() { return Some(a + 1u32); } g(a); None }\n"
GO_SOURCE = b"package main\nfunc f(a int) (int, error) {\n\tg(a)\n\ta++\n\treturn a - 0x1f, nil\n}\n"


def _by_operator(file: str, source: bytes) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for m in mutants_of(file, source):
        found.setdefault(m.operator, []).append((m.original, m.replacement))
    return found


def test_every_operator_on_c_and_the_mutants_compile(tmp_path: Path) -> None:
    ops = _by_operator("x.c", C_SOURCE)
    assert set(ops) == set(OPERATORS)
    assert ("<", "<=") in ops["relational"] and ("&&", "||") in ops["logical"]
    assert ("0x1F", "0x20") in ops["constant"] and ("010", "07") in ops["constant"]
    assert ("!(a == 0x1F)", "(a == 0x1F)") in ops["negation"] and ("break;", ";") in ops["statement"]
    assert ("", "return 0; ") in ops["return"] and ("", "return; ") in ops["return"]
    # neither the #define nor the array size is a value the program computes with
    assert ("10", "11") not in ops["constant"] and ("4", "5") not in ops["constant"]
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    for i, m in enumerate(mutants_of("x.c", C_SOURCE)):
        path = tmp_path / f"m{i}.c"
        path.write_bytes(m.apply(C_SOURCE))
        res = subprocess.run(["gcc", "-fsyntax-only", str(path)], capture_output=True, text=True)
        assert res.returncode == 0, (m, res.stderr)


def test_python_mutants_compile_and_the_early_return_is_indented() -> None:
    mutants = mutants_of("pkg/m.py", PY_SOURCE)
    ops = {m.operator for m in mutants}
    assert ops == set(OPERATORS)
    for m in mutants:
        compile(m.apply(PY_SOURCE), "m.py", "exec")  # raises on a broken mutant
    early = [m for m in mutants if m.operator == "return"]
    assert [m.line for m in early] == [2, 11]
    assert b'return None\n    """Doc."""' in early[0].apply(PY_SOURCE)
    # a docstring is not a statement to drop; `//` and `and`/`or` are operators
    assert all(m.original != '"""Doc."""' for m in mutants)
    assert {("//", "/"), ("and", "or"), ("or", "and")} <= {(m.original, m.replacement) for m in mutants}


def test_rust_and_go_replacements_keep_their_forms() -> None:
    rust = _by_operator("src/lib.rs", RUST_SOURCE)
    assert ("1u32", "2u32") in rust["constant"] and ("1u32", "0u32") in rust["constant"]
    assert rust["return"] == [("", "return None; ")]
    assert ("||", "&&") in rust["logical"] and ("!ok()", "ok()") in rust["negation"]
    go = _by_operator("main.go", GO_SOURCE)
    assert go["return"] == [("", "return *new(int), *new(error); ")]
    assert ("0x1f", "0x20") in go["constant"] and ("a++", "") in go["statement"]
    assert ("-", "+") in go["arithmetic"] and ("++", "--") in go["arithmetic"]
    assert mutants_of("README.md", b"a < b") == []


def test_mutant_ids_are_stable_and_distinct() -> None:
    first = mutants_of("x.c", C_SOURCE)
    again = mutants_of("x.c", C_SOURCE)
    assert [m.id for m in first] == [m.id for m in again]
    assert len({m.id for m in first}) == len(first)


def test_plan_samples_only_covered_lines_seeded_and_names_the_tests(tmp_path: Path) -> None:
    (tmp_path / "x.c").write_bytes(C_SOURCE)
    per_test = {"t.a": {"x.c": [6, 7]}, "t.b": {"x.c": [7, 9]}, "t.dropped": {"x.c": [11, 12]}}
    planned, pool = plan(tmp_path, ["t.a", "t.b"], per_test, OPERATORS, budget=5, seed=3)
    assert pool == len([m for m in mutants_of("x.c", C_SOURCE) if m.line in (6, 7, 9)])
    assert len(planned) == 5 and {p.mutant.line for p in planned} <= {6, 7, 9}
    for p in planned:
        assert p.tests == {6: ("t.a",), 7: ("t.a", "t.b"), 9: ("t.b",)}[p.mutant.line]
    again, _ = plan(tmp_path, ["t.a", "t.b"], per_test, OPERATORS, budget=5, seed=3)
    other, _ = plan(tmp_path, ["t.a", "t.b"], per_test, OPERATORS, budget=5, seed=4)
    assert again == planned and other != planned
    assert [p.mutant.start for p in planned] == sorted(p.mutant.start for p in planned)
    chunks = split_evenly(planned, 2)
    assert [len(c) for c in chunks] == [3, 2] and [p for c in chunks for p in c] == planned
    assert split_evenly([Planned(planned[0].mutant, ())], 4) == [[Planned(planned[0].mutant, ())]]


def test_a_package_that_is_the_tree_itself_has_mutants(tmp_path: Path) -> None:
    """dirsearch's tree is its package (an `__init__.py` at the root); coverage names its files
    as installed, `dirsearch/lib/data.py`, and the mutant keeps that name (its installed copy)."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/data.py").write_text("def f(a, b):\n    return a < b\n")
    per_test = {"t.a": {"dirsearch/lib/data.py": [2]}}
    assert plan(tmp_path, ["t.a"], per_test, OPERATORS, budget=5, seed=0)[1] == 0  # not a package yet
    (tmp_path / "__init__.py").write_text("")
    planned, pool = plan(tmp_path, ["t.a"], per_test, OPERATORS, budget=5, seed=0)
    assert pool > 0 and {p.mutant.file for p in planned} == {"dirsearch/lib/data.py"}


def test_node_ids_from_junit_names_and_back() -> None:
    files = {"eval/tests/test_main.py", "eval/tests/test_x.py"}
    assert node_id("eval.tests.test_main.test_a_0001", files) == "eval/tests/test_main.py::test_a_0001"
    assert (
        node_id("eval.tests.test_x.TestK.test_b[1.5-a]", files)
        == "eval/tests/test_x.py::TestK::test_b[1.5-a]"
    )
    with pytest.raises(MutationError, match="in no file"):
        node_id("eval.tests.test_gone.test_a", files)


def test_rebuild_plans_skip_configuring_and_find_python_sources(tmp_path: Path) -> None:
    (tmp_path / "configure.ac").write_text("AC_INIT([tool], [1.0])\n")
    (tmp_path / "Makefile.am").write_text("bin_PROGRAMS = tool\n")
    auto = autotools(tmp_path, None, None)
    assert auto is not None
    commands = rebuild_plan(auto).commands
    assert commands[0] == "make -j2" and len(commands) == 2 and "configure" not in " ".join(commands)
    (tmp_path / "bootstrap").write_text("#!/bin/sh\n")  # gnulib's, as libidn2's tree has
    (tmp_path / "bootstrap.conf").write_text("GNULIB_REVISION=c89cd2fbd3b9\n")
    gnulib = autotools(tmp_path, None, None)
    assert gnulib is not None and "./bootstrap" in " ".join(gnulib.build)
    assert rebuild_plan(gnulib).commands == commands  # made once, with the image
    (tmp_path / "CMakeLists.txt").write_text("project(tool)\nadd_executable(tool main.c)\n")
    cm = cmake(tmp_path, None, None)
    assert cm is not None and not any("-S" in c for c in rebuild_plan(cm).commands)
    py = Recipe(
        kind="python",
        language="python",
        build=[
            "python3 -m venv .tfpip",
            ".tfpip/bin/pip install .",
            "python3 -m zipapp .tfapp -o executable",
        ],
        coverage_build=[],
        executable="executable",
        coverage_executable="executable",
    )
    plan_ = rebuild_plan(py)
    assert plan_.commands == ("python3 -m zipapp .tfapp -o executable",)
    assert (
        plan_.target("src/pkg/a.py") == "/src/.tfapp/pkg/a.py"
        and plan_.target("pkg/a.py") == "/src/.tfapp/pkg/a.py"
    )
    assert "install -D -m 0755 /src/executable /task/mutant/program" in plan_.script()
    # ufomerge keeps its package in Lib/: its installed copy has no Lib/ (FileNotFoundError before)
    (tmp_path / "Lib/ufomerge").mkdir(parents=True)
    (tmp_path / "Lib/ufomerge/__init__.py").write_text("def main(): pass\n")
    lib = rebuild_plan(py.model_copy(update={"entry_point": "ufomerge.cli:main"}), tmp_path)
    assert lib.target("Lib/ufomerge/__init__.py") == "/src/.tfapp/ufomerge/__init__.py"


def _record(status: str, file: str = "a.c", op: str = "relational") -> MutantRecord:
    return MutantRecord.model_validate(
        {
            "id": "x",
            "file": file,
            "line": 1,
            "operator": op,
            "original": "<",
            "replacement": "<=",
            "status": status,
        }
    )


def test_report_counts_score_and_round_trip(tmp_path: Path) -> None:
    records = [
        _record("killed"),
        _record("killed", "b.c"),
        _record("killed", op="constant"),
        _record("survived", "b.c"),
        _record("build_failed"),
        _record("timeout"),
        _record("equivalent"),
    ]
    report = MutationReport.from_records(records, candidates=40, budget=7, seed=0)
    assert (report.mutants, report.killed, report.survived, report.build_failed, report.timeout) == (
        7,
        3,
        1,
        1,
        1,
    )
    assert report.score == 0.75  # killed / (killed + survived): the rest are not counted
    assert report.files["b.c"].killed == 1 and report.files["b.c"].survived == 1
    assert report.operators["constant"].mutants == 1
    assert [(s.file, s.operator, s.original, s.replacement) for s in report.survivors] == [
        ("b.c", "relational", "<", "<=")
    ]
    save_json(tmp_path / "mutation.json", report)
    assert load_json_model(tmp_path / "mutation.json", MutationReport) == report
    assert MutationReport.from_records([_record("build_failed")]).score is None


def test_guided_tests_are_named_apart_from_the_suite_and_keep_their_probes() -> None:
    from taskfoundry.kinds.program.mutate.guided import GUIDED_PREFIX, guided_tests
    from taskfoundry.kinds.program.testgen.explorer import Kept
    from taskfoundry.kinds.program.testgen.probes import Outcome, Probe

    def kept(args: tuple[str, ...], out: str) -> Kept:
        return Kept(Probe(args), Outcome(0, out, "", False, False, {}), "guided", {"a.c": {3}})

    found = {
        "m1": kept(("count", "x"), "1\n"),
        "m2": kept(("--sum", "1"), "2\n"),
        "m3": kept(("count", "x"), "1\n"),
    }
    files, names = guided_tests(found, "tool", 0)
    assert files and all(name.startswith(GUIDED_PREFIX) for name in files)
    assert len(names) == 2  # one test a distinct probe
    for junit, item in names.items():
        module, function = junit.split(".")[2:]
        assert f"def {function}(" in files[module + ".py"]
        assert repr(list(item.probe.args)) in files[module + ".py"].split(f"def {function}(")[1]
    assert "timeout=" not in "".join(files.values())


def test_spare_probes_round_trip_and_give_each_survivors_line_its_share(tmp_path: Path) -> None:
    from taskfoundry.kinds.program.mutate.guided import SPARE, from_spare
    from taskfoundry.kinds.program.testgen.explorer import Kept
    from taskfoundry.kinds.program.testgen.probes import Outcome, Probe
    from taskfoundry.kinds.program.testgen.spare import read_spare, write_spare

    def kept(n: int, lines: set[int]) -> Kept:
        probe = Probe(
            ("sum", str(n)), stdin=b"\x00\xff" if n % 2 else "1 2\n", files=(("in.gz", b"\x1f\x8b"),)
        )
        out = Outcome(n, f"{n}\n", "", False, False, {"out.txt": "x"}, {"a.c": lines})
        return Kept(probe, out, f"sum|{n}", {"a.c": lines}, 0)

    spare = [kept(1, {3, 4}), kept(2, {4}), kept(3, {4, 9}), kept(4, {3})]
    path = tmp_path / "spare-probes.jsonl"
    assert read_spare(path) == []  # a generator that kept none
    write_spare(path, spare)
    again = read_spare(path)
    assert [(k.probe, k.outcome.signature, k.covered) for k in again] == [
        (k.probe, k.outcome.signature, k.covered) for k in spare
    ]
    chosen, missing = from_spare(again, {("a.c", 3), ("a.c", 4), ("a.c", 7)}, per_target=2)
    # line 4 has its two (probes 1 and 2), line 3 its two (1 and 4); probe 3 adds nothing
    assert [k.probe.args for k in chosen] == [("sum", "1"), ("sum", "2"), ("sum", "4")]
    assert missing == {("a.c", 7)} and {k.feature for k in chosen} == {SPARE}


def test_a_cached_mutation_stage_whose_suite_is_gone_runs_again(tmp_path: Path) -> None:
    from taskfoundry.flows.cache import stale_reason
    from taskfoundry.kinds.program.results import FilterStage, GenerateStage
    from taskfoundry.models import CoverageReport

    empty = CoverageReport.from_lines({}, {})
    suite = tmp_path / "suite"
    gen = GenerateStage(
        branch="b", suite=suite, tests=[], generated=0, probes_run=0, exhausted=None, coverage=empty
    )
    # what the mutation stage hands on: the suite to package, the verdict with its report
    stage = (
        gen,
        FilterStage(kept=[], dropped={}, dummy_pass_rate=0, coverage=empty, mutation=MutationReport()),
    )
    assert stale_reason(stage, lambda tag: True) == f"{suite / 'eval' / 'tests'} is gone"
    (suite / "eval" / "tests").mkdir(parents=True)
    assert stale_reason(stage, lambda tag: True) is None


def test_unknown_operators_are_a_config_error_naming_the_valid_ones() -> None:
    from taskfoundry.config import load_config
    from taskfoundry.errors import ConfigError

    with pytest.raises(ConfigError, match=r"unknown mutation operator.*'bogus'.*valid: relational"):
        load_config(None, {"mutation": {"operators": ["relational", "bogus"]}})


def test_the_revision_request_names_each_survivor_with_its_source(tmp_path: Path) -> None:
    from taskfoundry.kinds.program.mutate.revision import revision_request

    (tmp_path / "x.c").write_bytes(C_SOURCE)
    mutants = mutants_of("x.c", C_SOURCE)
    flip = next(m for m in mutants if (m.original, m.replacement) == ("<", "<="))
    drop = next(m for m in mutants if m.operator == "statement" and m.original.startswith("printf"))
    gone = MutantRecord(
        id="g", status="survived", file="gone.c", line=3, operator="constant", original="1", replacement="2"
    )
    text = revision_request([flip, drop, gone], tmp_path, radius=1)
    assert "These changes to the program survive your suite" in text and "test_mutants_" in text
    assert f"1. x.c:{flip.line} (relational): `<` replaced by `<=`" in text
    assert f'2. x.c:{drop.line} (statement): `printf("%d\\n", i);` replaced by `;`' in text
    lines = C_SOURCE.decode().splitlines()
    for n in (flip.line - 1, flip.line + 1):  # the line, marked, and one either side
        assert f"  {n:5d} | {lines[n - 1]}\n" in text
    assert f"> {flip.line:5d} | {lines[flip.line - 1]}" in text
    assert text.endswith("3. gone.c:3 (constant): `1` replaced by `2`")  # no source: named only
    capped = revision_request([flip, drop, gone], tmp_path, limit=1)
    assert "(and 2 more changes)" in capped and "2. x.c" not in capped


def test_the_mutation_stage_knows_which_generator_wrote_the_suite() -> None:
    from taskfoundry.config import Config

    agent = sections.for_mutate(Config(generator="agent")).generator
    assert agent.name == "agent" and agent.agent == Config().agent
    assert sections.for_mutate(Config()).generator.name == "explorer"


def test_go_build_id_is_blanked_before_the_equivalence_hash(tmp_path: Path) -> None:
    """Go's build ID hashes the source: two builds of the same code from different text
    (a mutant in a comment's line, a folded constant) must hash alike, other code not."""
    import hashlib
    import os

    from taskfoundry.kinds.program.mutate.rebuild import _BLANK_GO_BUILD_ID

    fake_go = tmp_path / "bin" / "go"
    fake_go.parent.mkdir()
    fake_go.write_text('#!/bin/sh\n[ "$1 $2" = "tool buildid" ] && grep -ao "BUILDID-[a-z]*" "$3"\n')
    fake_go.chmod(0o755)

    def digest(body: bytes) -> str:
        program = tmp_path / "program"
        program.write_bytes(body)
        script = "\n".join([f"f={program}", *_BLANK_GO_BUILD_ID, 'sha256sum "$f" | cut -d" " -f1'])
        env = {**os.environ, "PATH": f"{fake_go.parent}:{os.environ['PATH']}"}
        return subprocess.run(
            ["sh", "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout

    same_a = digest(b"\x7fELF code BUILDID-aaaa more code")
    same_b = digest(b"\x7fELF code BUILDID-bbbb more code")
    other = digest(b"\x7fELF edoc BUILDID-cccc more code")
    assert same_a == same_b != other
    assert same_a.strip() != hashlib.sha256(b"\x7fELF code BUILDID-aaaa more code").hexdigest()


def _stage_inputs(tmp_path: Path) -> tuple[Any, Any, Any]:
    from taskfoundry.kinds.program.results import FilterStage, GenerateStage
    from taskfoundry.models import CoverageReport

    empty = CoverageReport.from_lines({}, {})
    gen = GenerateStage(
        branch="b", suite=tmp_path, tests=["t"], generated=1, probes_run=1, exhausted=None, coverage=empty
    )
    filt = FilterStage(kept=["t"], dropped={}, dummy_pass_rate=0, coverage=empty)
    report = MutationReport.from_records([_record("killed"), _record("survived")], budget=2, seed=0)
    return gen, filt, report


def test_the_stage_budget_bounds_the_guided_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the stage's deadline the guided step is not started: the first analysis stands,
    marked `exhausted: time`, and the summary says why."""
    from taskfoundry.kinds.program.mutate import stage
    from taskfoundry.kinds.program.settings import MutationSettings

    def never(*args: object) -> None:
        raise AssertionError("the guided step ran past the stage's deadline")

    monkeypatch.setattr(stage, "_guided_tests", never)
    gen, filt, report = _stage_inputs(tmp_path)
    settings = MutationSettings(out=tmp_path, namespace="t")
    past = time.monotonic() - 1
    suite, verdict = stage.strengthen(None, None, None, gen, filt, report, settings, None, past, None)  # type: ignore[arg-type]
    assert suite is gen and verdict.mutation is not None
    assert verdict.mutation.exhausted == "time" and verdict.mutation.score == report.score
    assert verdict.mutation.guided and "time budget" in (verdict.mutation.guided.error or "")


def test_one_deadline_for_the_whole_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first analysis and the guided step share the deadline the stage set at its start
    (before, each got `max_seconds` of its own)."""
    from types import SimpleNamespace

    from taskfoundry.kinds.program.mutate import stage
    from taskfoundry.kinds.program.settings import MutationConfig, MutationSettings

    gen, filt, report = _stage_inputs(tmp_path)
    seen: dict[str, float] = {}

    def analyze(*args: object) -> MutationReport:
        seen["analyze"] = float(args[-2])  # type: ignore[arg-type]
        return report

    def strengthen(*args: object) -> tuple[object, object]:
        seen["strengthen"] = float(args[-2])  # type: ignore[arg-type]
        return gen, filt

    monkeypatch.setattr(stage, "analyze", analyze)
    monkeypatch.setattr(stage, "strengthen", strengthen)
    monkeypatch.setattr(stage, "rebuild_plan", lambda recipe, repo: None)
    settings = MutationSettings(out=tmp_path, namespace="t", mutation=MutationConfig(max_seconds=60))
    src, build = SimpleNamespace(path=tmp_path, task_id="t"), SimpleNamespace(image="i", recipe=None)
    start = time.monotonic()
    stage.mutation_stage(src, build, None, gen, None, filt, settings, None)  # type: ignore[arg-type]
    assert seen["analyze"] == seen["strengthen"]
    assert start + 60 <= seen["analyze"] <= time.monotonic() + 60


def test_the_guided_exploration_ends_with_the_stage(tmp_path: Path) -> None:
    """The guided step's explorer gets what is left of the mutation stage's deadline, not its own
    900 s, which could run a stage of 600 s past its deadline by as much."""
    from taskfoundry.config import Config
    from taskfoundry.kinds.program.mutate.stage import guided_explorer

    config = Config(out=tmp_path, mutation={"guided_probes": 70}, explorer={"seed": 4})
    settings = sections.for_mutate(config)
    soon = guided_explorer(settings, time.monotonic() + 30)
    assert 0 < soon.max_seconds <= 30
    assert soon.max_probes == 70 and soon.seed == 5 and soon.coverage_target > 1
    unseeded = guided_explorer(sections.for_mutate(Config(out=tmp_path)), time.monotonic() + 30)
    assert unseeded.seed is not None  # a build's seed is secret: none set draws a fresh one
    assert guided_explorer(settings, time.monotonic() - 5).max_seconds == 0  # past it: nothing to spend
    later = guided_explorer(settings, time.monotonic() + 10_000)
    assert later.max_seconds == settings.explorer.max_seconds  # its own budget, when that is less


def test_a_slow_program_s_mutants_get_the_time_its_tests_give_a_call(tmp_path: Path) -> None:
    from taskfoundry.kinds.program.mutate.stage import _for_slow
    from taskfoundry.kinds.program.settings import MutationConfig, MutationSettings

    settings = MutationSettings(out=tmp_path, namespace="t", mutation=MutationConfig(program_timeout=5))
    assert _for_slow(settings, None) is settings
    assert _for_slow(settings, 20.0).mutation.program_timeout == 40.0  # the tests' timeout=40
    assert settings.mutation.program_timeout == 5  # the caller's settings stay
    assert _for_slow(settings, 2.0).mutation.program_timeout == 5  # never shorter


def test_a_pool_a_few_mutants_larger_gives_nearly_the_same_sample(tmp_path: Path) -> None:
    """Two builds' suites cover nearly the same lines: their samples must nearly agree, or their
    mutation scores do not compare (a random.sample of a pool one larger is another sample)."""
    import random

    (tmp_path / "x.c").write_bytes(C_SOURCE)
    every = {"t.a": {"x.c": list(range(1, 40))}}
    pool = plan(tmp_path, ["t.a"], every, OPERATORS, budget=10_000, seed=0)[1]
    fewer = {"t.a": {"x.c": [n for n in range(1, 40) if n != 9]}}
    budget = pool // 2
    full = {p.mutant.id for p in plan(tmp_path, ["t.a"], every, OPERATORS, budget=budget, seed=0)[0]}
    less = {p.mutant.id for p in plan(tmp_path, ["t.a"], fewer, OPERATORS, budget=budget, seed=0)[0]}
    assert len(full & less) >= budget - 3
    # the defence off: random.sample of the two pools shares about half
    mutants = [m for m in mutants_of("x.c", C_SOURCE) if m.line < 40]
    a = {m.id for m in random.Random(0).sample(mutants, budget)}
    b = {m.id for m in random.Random(0).sample([m for m in mutants if m.line != 9], budget)}
    assert len(a & b) < len(full & less)
