"""Mutation analysis on a real build image: scores that tell suites apart, and every verdict.

One tiny C program is built once for the module (its image is content-addressed, so a
warm engine reuses it); two hand-written suites run the same invocations, one asserting
exact output (strong) and one only that the program did not crash (weak).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskfoundry import sections
from taskfoundry.agent.fake_formats import FakeToolCall, FakeTurn
from taskfoundry.agent.fake_server import FakeLLMServer
from taskfoundry.assets import asset
from taskfoundry.config import Config
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.analyze import analyze
from taskfoundry.kinds.program.mutate.pool import LIMITS
from taskfoundry.kinds.program.mutate.rebuild import PROGRAM, rebuild_plan
from taskfoundry.kinds.program.mutate.select import Planned
from taskfoundry.kinds.program.mutate.worker import GUARD_SETTINGS, MIN_TIMEOUT, MutantWorker
from taskfoundry.kinds.program.results import CleanroomStage
from taskfoundry.kinds.program.settings import MutationConfig
from taskfoundry.kinds.program.testgen.explorer import Kept
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe
from taskfoundry.kinds.program.testgen.spare import SPARE_FILE, write_spare
from taskfoundry.kinds.program.testgen.stage import write_suite
from taskfoundry.mutation.operators import Mutant, mutants_of
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import DockerSandbox

from conftest import make_repo

pytestmark = pytest.mark.docker

MUTCALC_C = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long add(long a, long b)
{
    return a + b;
}

static long largest(long a, long b)
{
    if (a > b)
        return a;
    return b;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "add") == 0) {
        printf("%ld\n", add(atol(argv[2]), atol(argv[3])));
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "max") == 0) {
        printf("%ld\n", largest(atol(argv[2]), atol(argv[3])));
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "count") == 0) {
        long n = atol(argv[2]);
        for (long i = 1; i <= n; i++)
            printf("%ld\n", i);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "wait") == 0) {
        volatile long n = atol(argv[2]);
        while (n > 0)
            n--;
        puts("done");
        return 0;
    }
    fprintf(stderr, "usage: mutcalc add|max A B | count N | wait N\n");
    return 2;
}
"""
MAKEFILE = "mutcalc: mutcalc.c\n\tcc -O2 -o mutcalc mutcalc.c $(CFLAGS) $(LDFLAGS)\n"
README = "# mutcalc\n\n```\nmutcalc add 2 3\nmutcalc max 9 4\nmutcalc count 3\nmutcalc wait 10\n```\n"
# (name, argv, expected stdout, expected exit status)
CASES = [
    ("add_small", ["add", "2", "3"], "5\n", 0),
    ("add_negative", ["add", "-4", "1"], "-3\n", 0),
    ("max_first", ["max", "9", "4"], "9\n", 0),
    ("max_second", ["max", "1", "7"], "7\n", 0),
    ("max_equal", ["max", "3", "3"], "3\n", 0),
    ("count_three", ["count", "3"], "1\n2\n3\n", 0),
    ("count_zero", ["count", "0"], "", 0),
    ("wait_some", ["wait", "1000"], "done\n", 0),
    ("usage", [], "", 2),
]
USAGE = "usage: mutcalc add|max A B | count N | wait N\n"
ALL_LINES = {"mutcalc.c": list(range(1, MUTCALC_C.count("\n") + 1))}


def _suite(strong: bool, cases: list[tuple[str, list[str], str, int]] = CASES) -> dict[str, str]:
    body = ['"""mutcalc tests."""\n\nfrom tfrun import run\n']
    for name, argv, out, code in cases:
        # weak: "it did not crash"; strong: the exact exit status and output
        checks = ["    assert result.returncode in (0, 2)"]
        if strong:
            checks = [f"    assert result.returncode == {code}", f"    assert result.stdout == {out!r}"]
        body.append(
            f"\ndef test_{name}(tmp_path):\n"
            f'    """CATCHES: a rebuild that gets `mutcalc {" ".join(argv)}` wrong."""\n'
            f"    result = run({argv!r}, cwd=tmp_path)\n" + "\n".join(checks) + "\n"
        )
    return {"test_mutcalc.py": "\n".join(body)}


TESTS = [f"eval.tests.test_mutcalc.test_{name}" for name, *_ in CASES]
FAST = MutationConfig(budget=16, seed=1, program_timeout=2, output_cap=256 * 1024, workers=2)
HARNESS = EvalConfig()  # isolated, as the filter and the evaluator run suites
# beside the strong suite: passes only where tfrun drops each program call to its own uid
ISOLATED = "eval.tests.test_harness.test_the_program_runs_as_its_own_uid"
HARNESS_TEST = (
    "import tfrun\n\n\ndef test_the_program_runs_as_its_own_uid():\n"
    f"    assert tfrun.program_uid() == {HARNESS.program_uid}\n"
)


# beside the strong suite: a test that takes the whole pytest session down with it
DIES = "eval/tests/test_session.py::test_the_session_dies"
SESSION_TESTS = "import os\n\n\ndef test_the_session_dies():\n    os._exit(3)\n"


@pytest.fixture(scope="module")
def mutcalc(docker_client, base_image, tmp_path_factory) -> tuple[SourceResult, BuildStage, Path, Path]:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("mutcalc")
    repo = make_repo(root / "mutcalc", {"mutcalc.c": MUTCALC_C, "Makefile": MAKEFILE, "README.md": README})
    config = Config(out=root / "out")
    src = source_stage(str(repo), config.sources, config.work_dir)
    build = build_stage(src, sections.for_build(config), docker_client)
    strong, weak = root / "strong", root / "weak"
    write_suite(strong, {**_suite(True), "test_harness.py": HARNESS_TEST, "test_session.py": SESSION_TESTS})
    write_suite(weak, _suite(False))
    return src, build, strong, weak


def _analyze(mutcalc, suite: Path, config: MutationConfig = FAST):  # type: ignore[no-untyped-def]
    src, build, *_ = mutcalc
    per_test = {t: ALL_LINES for t in TESTS}
    return analyze(build.image, build.recipe, src.path, suite, TESTS, per_test, config, HARNESS)


def test_a_weak_suite_scores_low_and_a_strong_one_high(mutcalc) -> None:  # type: ignore[no-untyped-def]
    strong = _analyze(mutcalc, mutcalc[2])
    weak = _analyze(mutcalc, mutcalc[3])
    # the same seed and coverage: the same mutants, so the scores compare the assertions
    assert [r.id for r in strong.records] == [r.id for r in weak.records]
    assert strong.mutants == 16 and strong.unreliable_tests == [] and weak.unreliable_tests == []
    assert strong.score is not None and weak.score is not None
    assert strong.score >= 0.8, strong.survivors
    assert weak.score <= 0.35, weak.survivors
    assert len(weak.survivors) > len(strong.survivors)
    killed = {r.id: r.killed_by for r in strong.records if r.status == "killed"}
    assert all(name in TESTS for name in killed.values())


@pytest.fixture(scope="module")
def worker(mutcalc, docker_client) -> Iterator[MutantWorker]:  # type: ignore[no-untyped-def]
    _src, build, strong, _weak = mutcalc
    with DockerSandbox(build.image, LIMITS, client=docker_client) as box:
        w = MutantWorker(box, rebuild_plan(build.recipe), FAST, HARNESS)
        w.setup(strong)
        yield w


def test_the_suite_runs_as_the_grading_harness_runs_it(worker: MutantWorker) -> None:
    assert worker.failing([*TESTS, ISOLATED]) == set()
    sealed = worker.box.exec("stat -c %u:%a /workspace/eval", timeout=30, user="0:0")
    assert sealed.stdout.split() == [b"0:700"]  # eval/ is the grader's alone


def test_without_isolation_the_worker_runs_suite_and_program(mutcalc, docker_client) -> None:  # type: ignore[no-untyped-def]
    _src, build, strong, _weak = mutcalc
    with DockerSandbox(build.image, LIMITS, client=docker_client) as box:
        w = MutantWorker(box, rebuild_plan(build.recipe), FAST, EvalConfig(isolate=False))
        w.setup(strong)
        assert w.failing([*TESTS, ISOLATED]) == {ISOLATED}
        assert w.run(Planned(_pick("+", "-", "    return a + b;"), tuple(TESTS))).status == "killed"


def _pick(original: str, replacement: str, line_text: str) -> Mutant:
    line = MUTCALC_C.splitlines().index(line_text) + 1
    found = [
        m
        for m in mutants_of("mutcalc.c", MUTCALC_C.encode())
        if (m.original, m.replacement, m.line) == (original, replacement, line)
    ]
    assert len(found) == 1, found
    return found[0]


def test_a_mutant_build_behaves_as_the_mutant(worker: MutantWorker) -> None:
    minus = _pick("+", "-", "    return a + b;")
    record = worker.run(Planned(minus, tuple(TESTS)))
    res = worker.box.exec([PROGRAM, "add", "7", "2"], timeout=30)
    assert res.stdout == b"5\n"  # 7 - 2: the program now built is the mutant
    assert record.status == "killed" and record.killed_by == "eval.tests.test_mutcalc.test_add_small"
    # the next mutant, in the same file, starts from the original source again
    flipped = _pick(">", "<=", "    if (a > b)")
    assert worker.run(Planned(flipped, tuple(TESTS))).status == "killed"
    assert worker.box.exec([PROGRAM, "add", "7", "2"], timeout=30).stdout == b"9\n"


def test_a_mutant_that_does_not_compile_is_build_failed(worker: MutantWorker) -> None:
    good = _pick("+", "-", "    return a + b;")
    broken = Mutant(good.file, good.line, "arithmetic", good.start, good.end, "+", "+ +;")
    record = worker.run(Planned(broken, tuple(TESTS)))
    assert record.status == "build_failed" and "error" in record.detail and record.killed_by is None


def test_a_hanging_or_flooding_mutant_is_timeout_and_the_analysis_goes_on(worker: MutantWorker) -> None:
    hang = _pick("n--;", ";", "            n--;")
    flood = _pick("++", "--", "        for (long i = 1; i <= n; i++)")
    hung = worker.run(Planned(hang, ("eval.tests.test_mutcalc.test_wait_some",)))
    flooded = worker.run(Planned(flood, ("eval.tests.test_mutcalc.test_count_three",)))
    assert (hung.status, flooded.status) == ("timeout", "timeout"), (hung.detail, flooded.detail)
    assert "timeout" in hung.detail and "flood" in flooded.detail
    after = worker.run(Planned(_pick("+", "-", "    return a + b;"), tuple(TESTS)))
    assert after.status == "killed"


def test_a_neighbour_of_a_probe_kills_what_the_probe_cannot(worker: MutantWorker) -> None:
    """`count 0` prints nothing on the reference and on `i < n` alike; `count 1` does not."""
    from taskfoundry.kinds.program.mutate.guided import VARIANT, killers
    from taskfoundry.kinds.program.testgen.explorer import Kept
    from taskfoundry.kinds.program.testgen.probes import Outcome, Probe

    loop = "        for (long i = 1; i <= n; i++)"
    mutant = _pick("<=", "<", loop)
    probe = Kept(
        Probe(("count", "0")), Outcome(0, "", "", False, False, {}), "guided", {"mutcalc.c": {mutant.line}}
    )
    (found,) = killers(worker, [mutant], [probe], float("inf"), FAST.guided_pool)
    mutant_id, kept = found
    assert mutant_id == mutant.id and kept.feature == VARIANT
    assert kept.probe.args == ("count", "1") and kept.outcome.stdout == "1\n"
    assert kept.covered == {"mutcalc.c": {mutant.line}}


@pytest.mark.parametrize("spare", [False, True], ids=["explored", "spare"])
def test_guided_generation_adds_tests_that_kill_survivors(
    mutcalc, docker_client, tmp_path: Path, spare: bool
) -> None:  # type: ignore[no-untyped-def]
    """The candidates come from a new exploration, or (spare) from the probes the generate
    stage ran and did not keep: then nothing is explored again."""
    from taskfoundry.kinds.program.cleanroom.stage import cleanroom_stage
    from taskfoundry.kinds.program.mutate.stage import mutation_stage
    from taskfoundry.kinds.program.results import FilterStage, GenerateStage, LintStage
    from taskfoundry.models import CoverageReport

    src, build, _strong, weak = mutcalc
    config = Config(
        out=tmp_path / "out",
        mutation=FAST.model_copy(update={"budget": 10, "guided_probes": 40}),
        filter={"gold_runs": 1, "dummies": ["silent", "cat"]},
    )
    clean = cleanroom_stage(src, build, sections.for_cleanroom(config), docker_client)
    lines = {"mutcalc.c": set(ALL_LINES["mutcalc.c"])}
    every = CoverageReport.from_lines(lines, lines)
    gen = GenerateStage(
        branch="hand",
        suite=weak,
        tests=TESTS,
        generated=len(TESTS),
        probes_run=0,
        exhausted=None,
        coverage=every,
        per_test_lines={t: ALL_LINES for t in TESTS},
    )
    filt = FilterStage(kept=TESTS, dropped={}, dummy_pass_rate=0.0, coverage=every)
    lint = LintStage(dropped={}, findings=0, high=0, report={})
    if spare:  # what the explorer would have left: the suite's own runs, each reaching every line
        write_spare(sections.for_mutate(config).names(src).generate_dir / SPARE_FILE, _spare_probes())
    suite, verdict = mutation_stage(
        src, build, clean, gen, lint, filt, sections.for_mutate(config), docker_client
    )
    report = verdict.mutation
    assert report is not None and report.guided is not None, report
    guided = report.guided
    assert guided.survived_before > 0 and guided.tests_added > 0 and guided.killed > 0, guided
    assert report.score is not None and guided.score_before is not None
    assert report.score > guided.score_before
    added = [t for t in verdict.kept if ".test_mutants_" in t]
    assert len(added) == guided.tests_added and verdict.kept[: len(TESTS)] == TESTS
    assert {r.killed_by for r in report.records if r.killed_by in added}  # the new tests kill
    assert sorted(p.name for p in (suite.suite / "eval" / "tests").glob("test_mutants_*.py"))
    if spare:
        assert guided.spare_candidates == guided.candidates > 0 and guided.probes_run == 0, guided
    else:
        assert guided.spare_candidates == 0 and guided.probes_run > 0, guided


def _spare_probes() -> list[Kept]:
    every = {"mutcalc.c": set(ALL_LINES["mutcalc.c"])}
    return [
        Kept(
            Probe(tuple(argv)), Outcome(code, out, "" if code == 0 else USAGE, False, False, {}), name, every
        )
        for name, argv, out, code in CASES
    ]


# mutant schemata: one build for many mutants, one pytest session for their tests


def test_schemata_and_rebuilds_agree_on_every_mutant(mutcalc) -> None:  # type: ignore[no-untyped-def]
    many = FAST.model_copy(update={"budget": 40})
    rebuilt = _analyze(mutcalc, mutcalc[2], many.model_copy(update={"schemata": False}))
    switched = _analyze(mutcalc, mutcalc[2], many)
    assert [r.id for r in rebuilt.records] == [r.id for r in switched.records] and switched.mutants == 40
    assert {r.way for r in rebuilt.records} == {"rebuild"}
    ways = [r.way for r in switched.records]
    assert ways.count("schema") >= 35, [(r.original, r.replacement, r.detail) for r in switched.records]
    _same_verdicts(rebuilt.records, switched.records)
    # one build: no schema mutant pays for one of its own
    assert all(r.build_seconds == 0 for r in switched.records if r.way == "schema")
    # every test covers every line here, but a mutant ran only the tests whose runs of the
    # watch build gave its expression another value: fewer runs, the same verdicts
    watched = [r for r in switched.records if r.infecting is not None]
    infecting = sum(r.infecting or 0 for r in watched)
    assert len(watched) >= 20 and infecting < sum(r.tests_run for r in watched) / 2
    unwatched = _analyze(mutcalc, mutcalc[2], many.model_copy(update={"infection": False}))
    assert all(r.infecting is None for r in unwatched.records)
    _same_verdicts(unwatched.records, switched.records)


def _same_verdicts(alone: list[Any], switched: list[Any]) -> None:
    """The same mutants and verdicts, but for trivial compiler equivalence: a survivor the
    switched run did not rebuild alone (`checked` false: it ran in the schema and a run of the
    watch build infected it) is not found equivalent there, where a rebuild of it alone is
    (docs/mutation.md). The consistent sample of 40 holds one such mutant."""
    assert [r.id for r in alone] == [w.id for w in switched]
    for r, w in zip(alone, switched, strict=True):
        assert r.status == w.status or (r.status, w.status, w.checked) == ("equivalent", "survived", False), (
            r,
            w,
        )
    assert sum(r.status != w.status for r, w in zip(alone, switched, strict=True)) <= 2


@pytest.fixture(scope="module")
def schema_worker(mutcalc, docker_client) -> Iterator[MutantWorker]:  # type: ignore[no-untyped-def]
    """A worker whose schema holds: a killed mutant, a hang, a flood, one that does not compile."""
    _src, build, strong, _weak = mutcalc
    with DockerSandbox(build.image, LIMITS, client=docker_client) as box:
        w = MutantWorker(box, rebuild_plan(build.recipe), FAST, HARNESS)
        w.setup(strong, [_minus(), _hang(), _flood(), _broken()])
        yield w


def _minus() -> Mutant:
    return _pick("+", "-", "    return a + b;")


def _hang() -> Mutant:
    return _pick("n--;", ";", "            n--;")


def _flood() -> Mutant:
    return _pick("++", "--", "        for (long i = 1; i <= n; i++)")


def _broken() -> Mutant:
    good = _pick(">", "<=", "    if (a > b)")
    return Mutant(good.file, good.line, "relational", good.start, good.end, ">", "> >")


def test_a_schema_session_goes_on_past_hangs_floods_and_build_failures(schema_worker: MutantWorker) -> None:
    assert set(schema_worker.schema.switches) == {_minus().id, _hang().id, _flood().id}
    assert "does not compile" in schema_worker.schema.left_out[_broken().id]
    assert schema_worker.failing(TESTS) == set()
    assert schema_worker.guard == "c"  # the build image has a compiler
    # a hang costs the timeout fitted to the suite's slowest test on the schema program
    conf = schema_worker.box.exec(["cat", GUARD_SETTINGS], timeout=30).stdout.decode()
    assert f"timeout={schema_worker.timeout:g}\n" in conf
    assert MIN_TIMEOUT <= schema_worker.timeout <= FAST.program_timeout
    planned = [
        Planned(_hang(), ("eval.tests.test_mutcalc.test_wait_some",)),
        Planned(_flood(), ("eval.tests.test_mutcalc.test_count_three",)),
        Planned(_broken(), tuple(TESTS)),
        Planned(_minus(), tuple(TESTS)),
    ]
    records, out_of_time = schema_worker.run_all(planned, deadline=float("inf"))
    got = [(r.status, r.way) for r in records]
    assert got == [
        ("timeout", "schema"),
        ("timeout", "schema"),
        ("build_failed", "rebuild"),
        ("killed", "schema"),
    ]
    assert "timeout" in records[0].detail and "flood" in records[1].detail and not out_of_time
    assert records[3].killed_by == "eval.tests.test_mutcalc.test_add_small"


# (name, program script, what each guard must give: exit status, mark, output)
GUARD_CASES = [
    ("switch", 'echo "on=$TF_MUTANT $*"; exit 3', (3, "", "on=7 a b c\n")),
    ("hang", "sleep 30", (124, "timeout", "")),
    ("flood", "yes", (125, "flood", None)),
    ("signal", "kill -SEGV $$", (-11, "", "")),
    # a file past the cap: stopped, unless the program raises its own (soft) limit to the hard
    # one first, as a Python gold unpacking 185 MB of its own files does (fabio)
    ("file cap", "head -c 200000 /dev/zero > /tmp/g/big || echo capped", (0, "", "capped\n")),
    (
        "own files",
        "ulimit -S -f unlimited 2>/dev/null; head -c 200000 /dev/zero > /tmp/g/big && echo wrote",
        (0, "", "wrote\n"),
    ),
    # a script is handed the path it was run by: through the link named as the task calls the
    # program, it sees that name (a Python gold's argparse: "usage: executable", not "prog")
    ("script's name", 'echo "${0##*/}"', (0, "", "executable\n")),
]


@pytest.mark.parametrize("name,script,want", GUARD_CASES, ids=[c[0] for c in GUARD_CASES])
def test_the_compiled_guard_does_what_the_python_guard_does(
    schema_worker: MutantWorker, name, script, want
) -> None:  # type: ignore[no-untyped-def]
    """Both guards on the same program: its status (or its signal), the mark, its output."""
    box = schema_worker.box
    conf = box.exec(["cat", GUARD_SETTINGS], timeout=30).stdout
    setup = (
        f"mkdir -p /tmp/g/marks && printf '#!/bin/sh\\n%s\\n' '{script}' > /tmp/g/prog"
        " && chmod 755 /tmp/g/prog"
        " && cp /workspace/executable /tmp/g/c"
        " && mkdir -p /tmp/g/prog.d && ln -sfn /tmp/g/prog /tmp/g/prog.d/executable"
    )
    assert box.exec(setup, timeout=30, user="0:0").ok
    settings = (
        "program=/tmp/g/prog\nargv0=/workspace/executable\ntimeout=1\ncap=65536\n"
        "marks=/tmp/g/marks\ncurrent=/tmp/g/current\n"
    )
    box.put_file(settings.encode(), GUARD_SETTINGS)
    box.put_file(b"program=/tmp/g/prog\nswitch=7\n", "/tmp/g/current")
    box.put_file(asset("program/mutant_guard.py"), "/tmp/g/py", mode=0o755)
    try:
        for guard in ("/tmp/g/c", "/tmp/g/py"):
            res = box.exec(
                f'rm -f /tmp/g/marks/*; {guard} a b c; echo "rc=$?" >&2; ls /tmp/g/marks >&2',
                timeout=30,
                user="0:0",
            )
            err = res.stderr.decode()
            code = int(err.split("rc=")[1].split()[0])
            status, mark, out = want
            assert (code if code < 128 else -(code - 128)) == status, (guard, err)
            assert mark in err.split("rc=")[1], (guard, err)
            if out is not None:
                assert res.stdout.decode() == out, guard
    finally:
        box.put_file(conf, GUARD_SETTINGS)


def test_a_session_that_dies_resumes_after_the_mutant_it_died_on(schema_worker: MutantWorker) -> None:
    from taskfoundry.kinds.program.mutate.session import Entry
    from taskfoundry.kinds.program.mutate.worker import SCHEMA

    switch = schema_worker.schema.switches[_minus().id]
    add = "eval/tests/test_mutcalc.py::test_add_small"
    entries = [
        Entry("a", SCHEMA, switch, (add,)),
        Entry("b", SCHEMA, switch, (DIES,)),
        Entry("c", SCHEMA, switch, (add,)),
    ]
    found = schema_worker.session(entries, deadline=None)
    assert (found["a"].status, found["b"].status, found["c"].status) == ("killed", "error", "killed")
    assert "died" in found["b"].failed[0]


def test_guided_probes_switch_the_schema_instead_of_rebuilding(schema_worker: MutantWorker) -> None:
    from taskfoundry.kinds.program.testgen.probes import Probe

    res = schema_worker.box.exec(
        [schema_worker.schema and "/task/mutant/schema", "add", "7", "2"], timeout=30
    )
    assert res.stdout == b"9\n"  # no mutant on: the reference
    (out,) = schema_worker.outcomes(_minus(), [Probe(("add", "7", "2"))]) or []
    assert out.stdout == "5\n"
    rebuilt = schema_worker.box.exec([PROGRAM, "add", "7", "2"], timeout=30)
    assert rebuilt.stdout == b"9\n"  # nothing was rebuilt for it
    # many mutants' probes in one run, each probe with its own mutant's switch; the mutant the
    # schema does not hold is built alone, and does not build
    probe = Probe(("add", "7", "2"))
    many = schema_worker.outcomes_many([(_minus(), [probe]), (_hang(), [probe]), (_broken(), [probe])])
    assert [[o.stdout for o in outs] if outs else None for outs in many] == [["5\n"], ["9\n"], None]
    # the watch build: `add` gives `a + b` another value under `a - b`, `count 0` does not
    # reach it, and `wait 1` gives `n--` no other value under `;` (a statement: unwatched)
    minus, hang = schema_worker.switch(_minus()), schema_worker.switch(_hang())
    assert minus is not None and hang is None
    probes = [probe, Probe(("count", "0")), Probe(("add", "0", "0"))]
    assert schema_worker.infections(probes) == [{minus}, set(), set()]


# the agent generator's guided step: the survivors go back to the agent (a real OpenAI SDK
# client talking to a loopback fake server) as a revision request


@pytest.fixture(scope="module")
def clean(mutcalc, docker_client, tmp_path_factory) -> CleanroomStage:  # type: ignore[no-untyped-def]
    from taskfoundry.kinds.program.cleanroom.stage import cleanroom_stage

    config = Config(out=tmp_path_factory.mktemp("clean") / "out")
    return cleanroom_stage(mutcalc[0], mutcalc[1], sections.for_cleanroom(config), docker_client)


def _agent_config(
    tmp_path: Path, fake: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, **mutation: Any
) -> Config:
    monkeypatch.setenv("TF_FAKE_KEY", "sk-fake")
    model = {
        "provider": "openai",
        "model": "fake-model",
        "base_url": fake.openai_base_url,
        "api_key_env": "TF_FAKE_KEY",
        "max_retries": 0,
        "timeout": 60,
        "prices": {"fake-model": {"input_per_mtok": 3, "output_per_mtok": 15}},
    }
    return Config(
        out=tmp_path / "out",
        generator="agent",
        agent={"model": model, "budget": {"max_revisions": 1}},
        mutation=FAST.model_copy(update=mutation),
        filter={"gold_runs": 1, "dummies": ["silent", "cat"]},
    )


def _mutation_stage(  # type: ignore[no-untyped-def]
    mutcalc, clean, docker_client, suite: Path, config: Config, lines: dict[str, list[int]] = ALL_LINES
):
    """The mutation stage on a hand-written branch (tests TESTS in `suite`), every test kept."""
    from taskfoundry.kinds.program.mutate.stage import mutation_stage
    from taskfoundry.kinds.program.results import FilterStage, GenerateStage, LintStage
    from taskfoundry.models import CoverageReport

    src, build, *_ = mutcalc
    sets = {f: set(ls) for f, ls in lines.items()}
    covered = CoverageReport.from_lines(sets, sets)
    gen = GenerateStage(
        branch="agent-hand",
        suite=suite,
        tests=TESTS,
        generated=len(TESTS),
        probes_run=0,
        exhausted=None,
        coverage=covered,
        per_test_lines={t: lines for t in TESTS},
    )
    filt = FilterStage(kept=TESTS, dropped={}, dummy_pass_rate=0.0, coverage=covered)
    lint = LintStage(dropped={}, findings=0, high=0, report={})
    return gen, mutation_stage(src, build, clean, gen, lint, filt, sections.for_mutate(config), docker_client)


def _user_texts(fake: FakeLLMServer) -> list[str]:
    return [m["content"] for r in fake.requests for m in r.body["messages"] if m["role"] == "user"]


def _write_turn(name: str, source: str) -> FakeTurn:
    command = f"mkdir -p eval/tests && cat > eval/tests/{name} <<'EOF'\n{source}EOF\n"
    return FakeTurn(tool_calls=[FakeToolCall(name="bash", arguments={"command": command})])


def _submit_turn() -> FakeTurn:
    return FakeTurn(tool_calls=[FakeToolCall(name="submit", arguments={"summary": "done"})])


def test_the_agent_gets_the_survivors_and_its_tests_kill_them(  # type: ignore[no-untyped-def]
    mutcalc, clean, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The weak suite's survivors go to the agent; it answers with exact-output tests."""
    exact = [c for c in CASES if c[0] != "count_zero"]  # no empty-output test (a dummy passes it)
    killing = _suite(True, exact)["test_mutcalc.py"]
    with FakeLLMServer([_write_turn("test_mutants_exact.py", killing), _submit_turn()]) as fake:
        config = _agent_config(tmp_path, fake, monkeypatch, budget=6)
        gen, (suite, verdict) = _mutation_stage(mutcalc, clean, docker_client, mutcalc[3], config)
    report = verdict.mutation
    assert report is not None and report.guided is not None, report
    guided = report.guided
    assert guided.generator == "agent" and guided.error is None, guided
    assert guided.survived_before > 0 and guided.tests_added == len(exact) and guided.killed > 0, guided
    assert report.score is not None and guided.score_before is not None
    assert report.score > guided.score_before
    # the request named every survivor of the first analysis: file, line, operator, change
    request = _user_texts(fake)[0]
    added = [t for t in verdict.kept if ".test_mutants_exact." in t]
    before = [r for r in report.records if r.status == "survived" or r.killed_by in added]
    assert len(before) == guided.survived_before
    for r in before:
        assert f"{r.file}:{r.line} ({r.operator}): `{r.original}` replaced by `{r.replacement}`" in request
        assert f"> {r.line:5d} | " in request  # its source line, marked, in context
    assert "/tmp/tf-agent/suite (test_mutcalc.py)" in request  # the suite so far, to read
    assert fake.remaining == 0 and all(r.status == 200 for r in fake.requests)
    # the new tests went through lint and the filter, joined the suite, and kill survivors
    assert len(added) == len(exact) and verdict.kept[: len(TESTS)] == TESTS
    assert {r.killed_by for r in report.records if r.killed_by in added}
    assert (
        suite.suite != gen.suite and (suite.suite / "eval/tests/test_mutants_exact.py").read_text() == killing
    )
    assert (suite.suite / "eval/tests/test_mutcalc.py").exists()


def test_no_survivor_sends_no_revision_request(  # type: ignore[no-untyped-def]
    mutcalc, clean, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strong suite kills every mutant of `return a + b;`: the model is never asked."""
    line = MUTCALC_C.splitlines().index("    return a + b;") + 1
    with FakeLLMServer([_submit_turn()]) as fake:
        config = _agent_config(tmp_path, fake, monkeypatch)
        gen, (suite, verdict) = _mutation_stage(
            mutcalc, clean, docker_client, mutcalc[2], config, {"mutcalc.c": [line]}
        )
    report = verdict.mutation
    assert report is not None and report.mutants > 0 and report.killed == report.mutants, report
    assert report.survived == 0 and report.guided is None
    assert fake.requests == [] and suite == gen


def test_an_empty_or_malformed_answer_leaves_the_suite_and_report(  # type: ignore[no-untyped-def]
    mutcalc, clean, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text without a tool call, a cut-off tool call, a submit of nothing: no test is added."""
    script = [
        FakeTurn(text="I would rather not."),
        FakeTurn(tool_calls=[FakeToolCall(name="bash", arguments='{"command": "cat > eval/tests/t')]),
        _submit_turn(),
    ]
    with FakeLLMServer(script) as fake:
        config = _agent_config(tmp_path, fake, monkeypatch, budget=6)
        gen, (suite, verdict) = _mutation_stage(mutcalc, clean, docker_client, mutcalc[3], config)
    report = verdict.mutation
    assert report is not None and report.guided is not None, report
    guided = report.guided
    assert guided.generator == "agent" and guided.error is not None, guided
    assert "the agent's revision added no tests" in guided.error
    assert "mutants: submitted" in guided.error
    assert report.score == guided.score_before and report.survived == guided.survived_before > 0
    assert guided.tests_added == 0 and guided.killed == 0
    assert suite == gen and verdict.kept == TESTS
    assert all(r.killed_by in (None, *TESTS) for r in report.records)
    assert fake.remaining == 0 and "survive your suite" in _user_texts(fake)[0]


# the filter at its floor: gold x3 and the dummies in one pytest session a container
PLANTED = '''"""Tests the filter must drop, each for its own reason."""

import time

import pytest
from tfrun import run


def test_passes_on_anything(tmp_path):
    run(["add", "1", "2"], cwd=tmp_path)


def test_gold_gets_it_wrong(tmp_path):
    assert run(["add", "1", "1"], cwd=tmp_path).stdout == "3\\n"


def test_echo_passes(tmp_path):
    assert run(["max", "1", "2"], cwd=tmp_path).stdout in ("2\\n", "max 1 2\\n")


@pytest.mark.timeout(1)
def test_too_slow(tmp_path):
    time.sleep(3)
'''


def test_the_filter_in_one_session_keeps_and_drops_as_one_run_per_container(  # type: ignore[no-untyped-def]
    mutcalc, clean, docker_client, tmp_path: Path
) -> None:
    from taskfoundry.kinds.program.filter.run import Grader, run_filter
    from taskfoundry.kinds.program.settings import FilterConfig

    suite = tmp_path / "suite"
    write_suite(suite, {**_suite(True), "test_planted.py": PLANTED})
    planted = [
        f"eval.tests.test_planted.test_{n}"
        for n in ("passes_on_anything", "gold_gets_it_wrong", "echo_passes", "too_slow")
    ]
    tests = [*TESTS, *planted]
    grader = Grader.load(docker_client, clean.image, suite, HARNESS.model_copy(update={"pytest_workers": 1}))
    usage = clean.usage.get("", "")
    results = {}
    for one in (True, False):
        results[one] = run_filter(grader, tests, usage, FilterConfig(one_session=one))
    rounds, runs = results[True], results[False]
    assert rounds.kept == runs.kept and len(rounds.kept) >= 6 and not set(planted) & set(rounds.kept)
    reasons = {
        one: {
            t: [(d.id, d.detail if d.id == "dummy_pass" else "") for d in ds] for t, ds in r.dropped.items()
        }
        for one, r in results.items()
    }
    assert reasons[True] == reasons[False]
    assert [d.id for d in rounds.dropped[planted[0]]] == ["dummy_pass"] * 6
    assert [d.id for d in rounds.dropped[planted[1]]] == ["gold_fail"]
    assert ("dummy_pass", "echo") in reasons[True][planted[2]]
    assert [d.id for d in rounds.dropped[planted[3]]] == ["slow_or_hang"]
    assert rounds.gold_runs == runs.gold_runs


# a program with a memory outside its working directory: the second run answers otherwise
STATEFUL = (
    b"#!/bin/sh\nif [ -e /tmp/tf-seen ] || [ -e /dev/shm/tf-seen ]; then echo again; exit 0; fi\n"
    b": > /tmp/tf-seen; : > /dev/shm/tf-seen; echo first\n"
)
FIRST = (
    "from tfrun import run\n\n\ndef test_first(tmp_path):\n"
    '    assert run([], cwd=tmp_path).stdout == "first\\n"\n'
)
NO_RESET = b"def empty_basetemp(session):\n    pass\n\n\ndef sweep_programs_files():\n    pass\n"


@pytest.mark.parametrize("reset", [True, False], ids=["reset", "defence-off"])
def test_a_round_does_not_see_what_the_last_rounds_program_left(  # type: ignore[no-untyped-def]
    mutcalc, clean, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reset: bool
) -> None:
    """A gold that remembers its last run in /tmp and /dev/shm: in one container a run, each
    gold run is its first; in rounds of one session, only if what it left goes between rounds."""
    import dataclasses

    from taskfoundry.grading import rounds
    from taskfoundry.kinds.program.filter.run import Grader, run_filter
    from taskfoundry.kinds.program.filter.suite_run import with_executable
    from taskfoundry.kinds.program.settings import FilterConfig

    if not reset:
        monkeypatch.setattr(
            rounds, "asset", lambda name: NO_RESET if "session_reset" in name else asset(name)
        )
    suite = tmp_path / "suite"
    write_suite(suite, {"test_state.py": FIRST})
    grader = Grader.load(docker_client, clean.image, suite, HARNESS.model_copy(update={"pytest_workers": 1}))
    grader = dataclasses.replace(grader, workspace=with_executable(grader.workspace, STATEFUL))
    test = "eval.tests.test_state.test_first"
    runs = run_filter(grader, [test], "", FilterConfig(one_session=False, parallel=1))
    rounds_ = run_filter(grader, [test], "", FilterConfig(one_session=True, parallel=1))
    assert runs.kept == [test]
    if reset:
        assert rounds_.kept == runs.kept
    else:  # gold's second round answers "again": the test looks flaky and goes
        assert rounds_.kept == [] and rounds_.dropped[test][0].id.startswith("gold")


@pytest.mark.parametrize("reset", [True, False], ids=["reset", "defence-off"])
def test_a_mutant_does_not_see_what_the_last_mutants_program_left(  # type: ignore[no-untyped-def]
    schema_worker: MutantWorker, reset: bool
) -> None:
    """The same program for three entries of one session: each passes (survives) only if what
    the program left in /tmp and /dev/shm goes between mutants."""
    from taskfoundry.kinds.program.mutate.session import PLUGIN_DIR, Entry

    box = schema_worker.box
    plugin = box.get_file(f"{PLUGIN_DIR}/session_reset.py")
    box.put_file(STATEFUL, "/task/mutant/stateful", mode=0o755)
    box.put_file(FIRST.encode(), "/workspace/eval/tests/test_state.py")
    if not reset:
        box.put_file(NO_RESET, f"{PLUGIN_DIR}/session_reset.py")
    test = "eval/tests/test_state.py::test_first"
    try:
        found = schema_worker.session([Entry(n, "/task/mutant/stateful", 0, (test,)) for n in "abc"], None)
    finally:
        box.put_file(plugin, f"{PLUGIN_DIR}/session_reset.py")
        box.exec(
            "rm -f /workspace/eval/tests/test_state.py /tmp/tf-seen /dev/shm/tf-seen", timeout=30, user="0:0"
        )
    statuses = [found[n].status for n in "abc"]
    assert statuses == (["survived"] * 3 if reset else ["survived", "killed", "killed"]), found


# plain functions of tmp_path are called directly; the others go through pytest's protocol
DIRECT_TESTS = '''"""Verdicts the direct call must give as pytest's run protocol gives them."""

import time

from tfrun import run


def test_adds(tmp_path):
    assert run(["add", "2", "3"], cwd=tmp_path).stdout == "5\\n"


def test_errs(tmp_path):
    raise ValueError(run(["add", "2", "3"], cwd=tmp_path).stdout)


def test_sleeps(tmp_path):
    try:
        time.sleep(60)
    except Exception:  # a timeout the test itself can swallow is no timeout
        pass


def test_captures(tmp_path, capsys):
    print(run(["add", "2", "3"], cwd=tmp_path).stdout)
    assert capsys.readouterr().out == "5\\n\\n"
'''


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "protocol"])
def test_a_plain_test_called_directly_gets_the_verdict_pytests_protocol_gives(
    schema_worker: MutantWorker, direct: bool
) -> None:
    from taskfoundry.kinds.program.mutate.session import Entry, TestSession
    from taskfoundry.kinds.program.mutate.worker import SCHEMA

    box = schema_worker.box
    box.put_file(DIRECT_TESTS.encode(), "/workspace/eval/tests/test_direct.py")
    switch = schema_worker.schema.switches
    node = "eval/tests/test_direct.py::test_"
    entries = [
        Entry("minus", SCHEMA, switch[_minus().id], (f"{node}adds",)),
        Entry("hang", SCHEMA, switch[_hang().id], ("eval/tests/test_mutcalc.py::test_wait_some",)),
        Entry("flood", SCHEMA, switch[_flood().id], ("eval/tests/test_mutcalc.py::test_count_three",)),
        Entry("errs", SCHEMA, 0, (f"{node}errs",)),
        Entry("sleeps", SCHEMA, 0, (f"{node}sleeps",)),
        Entry("captures", SCHEMA, switch[_minus().id], (f"{node}captures",)),
        Entry("reference", SCHEMA, 0, (f"{node}adds", f"{node}captures")),
    ]
    session = TestSession(box, FAST.model_copy(update={"direct_calls": direct}), HARNESS)
    try:
        found = session.run(entries, deadline=None)
    finally:
        box.exec("rm -f /workspace/eval/tests/test_direct.py", timeout=30, user="0:0")
    got = {e.id: found[e.id].status for e in entries}
    assert got == {
        "minus": "killed",
        "hang": "timeout",
        "flood": "timeout",
        "errs": "killed",
        "sleeps": "timeout",
        "captures": "killed",
        "reference": "survived",
    }, found
    called = {e.id: found[e.id].direct for e in entries}
    plain = {"minus": 1, "hang": 1, "flood": 1, "errs": 1, "sleeps": 1, "captures": 0, "reference": 1}
    assert called == (plain if direct else dict.fromkeys(plain, 0))


# a program that keeps its state beside its working directory: /tfm-scratch/tf-seen
BESIDE = (
    b"#!/bin/sh\nif [ -e ../../tf-seen ]; then echo again; exit 0; fi\n"
    b"touch ../../tf-seen 2>/dev/null; echo first\n"
)


@pytest.mark.parametrize("defence", [True, False], ids=["defence", "defence-off"])
def test_a_mutant_cannot_leave_files_beside_its_directory_for_the_next(  # type: ignore[no-untyped-def]
    schema_worker: MutantWorker, defence: bool
) -> None:
    """The tests' directories sit in the session's scratch directory, which only pytest may
    write: a program that could write there would be seen by the next mutant's run."""
    from taskfoundry.kinds.program.mutate.session import SCRATCH, Entry

    box = schema_worker.box
    box.put_file(BESIDE, "/task/mutant/beside", mode=0o755)
    box.put_file(FIRST.encode(), "/workspace/eval/tests/test_state.py")
    if not defence:
        assert box.exec(f"chmod 1777 {SCRATCH}", timeout=30, user="0:0").ok
    test = "eval/tests/test_state.py::test_first"
    try:
        found = schema_worker.session([Entry(n, "/task/mutant/beside", 0, (test,)) for n in "abc"], None)
    finally:
        box.exec(
            f"chmod 0755 {SCRATCH}; rm -f {SCRATCH}/tf-seen /workspace/eval/tests/test_state.py",
            timeout=30,
            user="0:0",
        )
    statuses = [found[n].status for n in "abc"]
    assert statuses == (["survived"] * 3 if defence else ["survived", "killed", "killed"]), found


SLOW_TESTS = '''"""Four tests of a second each that pass whatever the program: a slow program's survivor."""

import time


def test_one(tmp_path):
    time.sleep(1)


def test_two(tmp_path):
    time.sleep(1)


def test_three(tmp_path):
    time.sleep(1)


def test_four(tmp_path):
    time.sleep(1)
'''
# the plugin's deadline looked at between mutants alone, as before
_MID_MUTANT_CHECK = (
    'if index and not entry.get("all") and time.time() > plan["deadline"]:\n            return None'
)


@pytest.mark.parametrize("checked", [True, False], ids=["mid-mutant", "defence-off"])
def test_the_deadline_stops_a_survivor_between_its_tests(schema_worker: MutantWorker, checked: bool) -> None:
    """A mutant whose tests take seconds each (ansible-lint's: its stage ran 924 s against a
    600 s deadline) stops at the deadline in the middle of its tests, with no verdict."""
    from taskfoundry.kinds.program.mutate.session import PLUGIN_DIR, Entry
    from taskfoundry.kinds.program.mutate.worker import SCHEMA

    box = schema_worker.box
    plugin = asset("program/mutant_session.py").decode()
    assert _MID_MUTANT_CHECK in plugin
    if not checked:
        box.put_file(plugin.replace(_MID_MUTANT_CHECK, "pass").encode(), f"{PLUGIN_DIR}/mutant_session.py")
    box.put_file(SLOW_TESTS.encode(), "/workspace/eval/tests/test_slow.py")
    tests = tuple(f"eval/tests/test_slow.py::test_{n}" for n in ("one", "two", "three", "four"))
    try:
        found = schema_worker.session([Entry("slow", SCHEMA, 0, tests)], deadline=time.monotonic() + 3.0)
    finally:
        box.put_file(plugin.encode(), f"{PLUGIN_DIR}/mutant_session.py")
        box.exec("rm -f /workspace/eval/tests/test_slow.py", timeout=30, user="0:0")
    if checked:
        assert "slow" not in found  # not analysed: the deadline came before its third test
    else:
        assert found["slow"].status == "survived"  # all four run, past the deadline


@pytest.mark.parametrize("stopped", [True, False], ids=["deadline", "defence-off"])
def test_the_guided_search_starts_no_probe_past_the_deadline(
    schema_worker: MutantWorker, monkeypatch: pytest.MonkeyPatch, stopped: bool
) -> None:
    """A group of mutants' probes runs in one exec of the probe runner; a slow program's (each
    probe seconds) ran 15 minutes past ansible-lint's deadline. Each probe here hangs on the
    mutant for `program_timeout` (2 s): the runner starts none past the deadline (3 s)."""
    from taskfoundry.kinds.program.mutate import guided

    if not stopped:  # the runner gets no deadline, as before
        monkeypatch.setattr(guided, "wall_clock", lambda deadline: 0.0)
    seen: list[Outcome] = []
    many = schema_worker.outcomes_many

    def spy(asked: list[tuple[Mutant, list[Probe]]]) -> list[list[Outcome] | None]:
        ran = many(asked)
        seen.extend(o for outs in ran for o in outs or [])
        return ran

    monkeypatch.setattr(schema_worker, "outcomes_many", spy)
    line = MUTCALC_C.splitlines().index("            n--;") + 1
    probe = Kept(Probe(("wait", "5")), Outcome(0, "done\n", "", False, False, {}), "f", {"mutcalc.c": {line}})
    found = list(guided.killers(schema_worker, [_hang()], [probe], time.monotonic() + 3.0, 8))
    assert found == [] and len(seen) >= 6  # a hang tells nothing; the pool's probes were asked
    assert schema_worker.stop_at == 0.0  # the deadline is the search's, not the worker's after it
    started = [o for o in seen if not o.not_run]
    assert sum(o.timed_out for o in started) >= 1  # `wait 5` hangs on the mutant
    if stopped:
        assert 1 <= len(started) < len(seen)  # the rest were not started
    else:
        assert len(started) == len(seen)  # every probe ran, the hanging ones their 2 s each
