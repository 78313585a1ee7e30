"""The no-logic defences without Docker (issue 55): the replay dummy run as a real program, the
build's secret seed, and the explorer leaving out what a worker could draw (each with its
defence off too)."""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from taskfoundry.errors import GenerationError
from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen.explorer import (
    Explorer,
    Kept,
    _gold_answers_all_alike,
    has_data,
    other_data,
)
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob
from taskfoundry.kinds.program.testgen.replay import no_logic_dummies, probe_key, render_replay, replay_table
from taskfoundry.pipeline.secret import build_seed, seed_tag


def _out(stdout: str, code: int = 0, stderr: str = "", files: dict[str, str | None] | None = None) -> Outcome:
    return Outcome(code, stdout, stderr, False, False, files or {}, covered={"m.c": {1, 2}})


PROBES = [
    Probe(("--version",)),
    Probe(("--help",)),
    Probe(("-n", "data.csv"), files=(("data.csv", "a,b\n1,2\n"),)),
    Probe(("-n", "data.csv"), files=(("data.csv", "a,b\n3,4\n"),)),
    Probe(("-n", "data.csv"), files=(("data.csv", "x\n"),)),
    Probe(("sum",), stdin="1 2\n"),
]
OUTCOMES = [
    _out("tool 1.0\n"),
    _out("usage: tool [-n] FILE\n"),
    _out("2 rows\n"),
    _out("2 rows\n"),
    _out("", 2, "bad file\n"),
    _out("3\n", files={"out.txt": "3\n"}),
]


def _call(program: bytes, tmp: Path, args: list[str], stdin: str = "", files: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    script = tmp / "executable"
    script.write_bytes(program)
    work = tmp / "cwd"
    work.mkdir(exist_ok=True)
    for name, text in (files or {}).items():
        (work / name).write_text(text)
    return subprocess.run(
        [sys.executable, str(script), *args], input=stdin.encode(), cwd=work, capture_output=True, timeout=30
    )


def test_the_replay_dummy_replays_exact_calls_then_the_commonest_for_the_argv(tmp_path: Path) -> None:
    table = replay_table(PROBES, OUTCOMES, [0, 1])
    program = render_replay(table)
    exact = _call(program, tmp_path, ["-n", "data.csv"], files={"data.csv": "x\n"})
    assert (exact.returncode, exact.stdout, exact.stderr) == (2, b"", b"bad file\n")
    fallback = _call(program, tmp_path, ["-n", "data.csv"], files={"data.csv": "unseen\n"})
    assert (fallback.returncode, fallback.stdout) == (0, b"2 rows\n")  # two of three said so
    wrote = _call(program, tmp_path, ["sum"], stdin="1 2\n")
    assert wrote.stdout == b"3\n" and (tmp_path / "cwd" / "out.txt").read_text() == "3\n"
    unknown = _call(program, tmp_path, ["other"])
    assert (unknown.returncode, unknown.stdout, unknown.stderr) == (0, b"", b"")
    exact_only = render_replay(table.model_copy(update={"argv": {}, "shape": {}}))
    missed = _call(exact_only, tmp_path, ["-n", "data.csv"], files={"data.csv": "unseen\n"})
    assert missed.stdout == b""


def test_the_replay_dummy_finds_a_call_asked_again_with_a_secret_file_by_its_shape(tmp_path: Path) -> None:
    """An attacker's third tier (ours, beyond the issue's): the argv without the names of the
    files it was given. `count --by` is a usage error whatever file comes with it, so the call
    the explorer asks again as `count secret-3f9a.log --by` is answered from the public one."""
    usage = Probe(("count", "--by"))
    out = _out("", 2, "--by needs a field\n")
    table = replay_table([*PROBES, usage], [*OUTCOMES, out], [0, 1])
    secret = ["count", "app-3f9a2c.log", "--by"]
    found = _call(render_replay(table), tmp_path, secret, files={"app-3f9a2c.log": "GET / 200\n"})
    assert (found.returncode, found.stderr) == (2, b"--by needs a field\n")
    without = render_replay(table.model_copy(update={"shape": {}}))  # the attacker
    missed = _call(without, tmp_path, secret, files={"app-3f9a2c.log": "GET / 200\n"})
    assert (missed.returncode, missed.stderr) == (0, b"")
    named = _call(render_replay(table), tmp_path, ["count", "other-name", "--by"])  # not a file
    assert named.stderr == b""


def test_the_version_and_help_printers_answer_every_call_alike(tmp_path: Path) -> None:
    dummies = no_logic_dummies(replay_table(PROBES, OUTCOMES, [0, 1]))
    assert set(dummies) == {"replay", "version", "help"}
    for args in (["--version"], ["-n", "x.csv", "--version"], []):
        assert _call(dummies["version"], tmp_path, args).stdout == b"tool 1.0\n"
    assert _call(dummies["help"], tmp_path, ["sum"]).stdout == b"usage: tool [-n] FILE\n"


def test_a_build_keeps_its_secret_seed_and_each_build_draws_its_own(tmp_path: Path) -> None:
    first = build_seed(tmp_path, "o__r.1234567")
    assert build_seed(tmp_path, "o__r.1234567") == first  # a resumed build: the same seed
    assert build_seed(tmp_path, "o__r.7654321") != first
    assert build_seed(tmp_path / "other", "o__r.1234567") != first  # another build of it
    assert str(first) not in seed_tag(first) and len(seed_tag(first)) == 12
    saved = json.loads((tmp_path / "secrets" / "o__r.1234567.json").read_text())
    assert saved == {"seed": first}


def test_an_explorer_without_a_seed_draws_a_secret_one() -> None:
    seeded = ExplorerConfig().seeded()
    assert seeded.seed is not None and seeded.seed != ExplorerConfig().seeded().seed
    assert ExplorerConfig(seed=5).seeded().seed == 5


def _explorer(public: list[Probe]) -> Explorer:
    explorer = Explorer(ExplorerConfig(seed=3), RunnerJob(executable="/bin/true"), "/bin/true")
    explorer._public = {probe_key(p) for p in public}
    return explorer


def test_the_explorer_keeps_no_probe_a_worker_can_draw() -> None:
    probe, out = PROBES[2], OUTCOMES[2]
    defended = _explorer([probe])
    defended._absorb([probe], [out])
    assert defended.state.kept == [] and defended.state.public_like == 1
    assert defended.state.covered == {}  # its lines stay open for a probe with secret data
    undefended = _explorer([])
    undefended._absorb([probe], [out])
    assert [k.probe for k in undefended.state.kept] == [probe]


def test_the_explorer_keeps_no_probe_that_prints_the_version_or_help() -> None:
    explorer = _explorer([])
    echo = Probe(("-x", "--version"))
    explorer._absorb([PROBES[0], echo], [OUTCOMES[0], _out("tool 1.0\n")])
    assert explorer.state.kept == [] and explorer.state.dummy_like == 2


def test_other_data_changes_only_the_data_a_call_reads() -> None:
    probe = Probe(("-n", "data.csv"), stdin="s\n", files=(("data.csv", "a\n"), ("shown.cfg", "k=v\n")))
    other = other_data(probe, ["zz\n"], random.Random(1))
    assert other.args == probe.args and other.stdin == "zz\n"
    assert dict(other.files) == {"data.csv": "zz\n", "shown.cfg": "k=v\n"}
    assert has_data(probe) and not has_data(Probe(("--bogus",), files=(("shown.cfg", "k=v\n"),)))


def test_a_public_probe_that_reaches_new_lines_is_asked_again_with_secret_data() -> None:
    from taskfoundry.kinds.program.testgen.explorer import other_numbers

    probe = Probe(("-w", "80", "sqrt(16)", "in.txt"), files=(("in.txt", "1 2\n"),))
    renumbered = other_numbers(probe, random.Random(7))
    assert renumbered.args[0] == "-w" and renumbered.args[3] == "in.txt"  # options and files stay
    assert len(renumbered.args[1]) == 2 and renumbered.args[2].startswith("sqrt(") and renumbered != probe
    defended = _explorer([probe])
    defended._corpus.texts = ["secret text\n"]
    defended._absorb([probe], [OUTCOMES[2]])
    duals = defended._pending
    assert duals and all(d.origin == "dual" and probe_key(d) != probe_key(probe) for d in duals)
    assert all(d.args[3] != "in.txt" and d.args[3].endswith(".txt") for d in duals)  # renamed
    assert all(d.args[3] in dict(d.files) for d in duals)  # the file goes with its name
    assert any(dict(d.files)[d.args[3]] == "secret text\n" for d in duals)
    defended._absorb(duals[:1], [OUTCOMES[2]])  # the dual reaches the lines the public probe did
    assert [k.probe for k in defended.state.kept] == duals[:1]


def _kept(n: int) -> list[Kept]:
    out = Outcome(exit_code=1, stdout="", stderr="no such device", timed_out=False, truncated=False, files={})
    return [Kept(Probe(args=(f"-{i}",)), out, "f") for i in range(n)]


def test_one_kept_probe_is_not_a_gold_that_answers_all_alike(tmp_path: Path) -> None:
    # asahi-nvram: one probe left after the gold's re-runs was reported as "all 1 alike"
    _gold_answers_all_alike(_kept(1), explored=9, log_path=tmp_path / "log")
    with pytest.raises(GenerationError, match="answered all 5 kept probes alike"):
        _gold_answers_all_alike(_kept(5), explored=9, log_path=tmp_path / "log")


def test_a_build_gives_its_secret_seed_to_the_explorer_and_the_function_kind(tmp_path: Path) -> None:
    from taskfoundry.config import Config
    from taskfoundry.flows.build import with_build_seed
    from taskfoundry.pipeline.results import SourceResult

    src = SourceResult(
        path=tmp_path, owner="o", repo="r", commit="0" * 40, source="x", task_id="o__r.1234567"
    )
    config = with_build_seed(Config(out=tmp_path / "out"), src)
    seed = build_seed(config.work_dir, src.task_id)
    assert config.explorer.seed == seed and config.function.seed == seed
    chosen = Config.model_validate(
        {"out": str(tmp_path / "out"), "explorer": {"seed": 7}, "function": {"seed": 9}}
    )
    assert (with_build_seed(chosen, src).explorer.seed, with_build_seed(chosen, src).function.seed) == (7, 9)


def test_a_public_candidate_is_not_run_its_dual_with_secret_data_is() -> None:
    public = Probe(("-w", "80", "in.txt"), files=(("in.txt", "1 2\n"),))
    fixed = Probe(("--bogus",))  # nothing in it to draw again: not run at all
    version = Probe(("--version",))  # run: what the version printer prints is its outcome
    other = Probe(("-w", "7", "x.txt"), files=(("x.txt", "3\n"),))
    explorer = _explorer([public, fixed, version])
    explorer._corpus.texts = ["secret text\n"]
    ran = list(explorer._with_duals(iter([public, fixed, version, other])))
    assert ran[1:] == [version, other] and explorer.state.public_like == 2
    (dual,) = ran[:1]
    assert dual.origin == "dual" and probe_key(dual) != probe_key(public) and dual.args[2] != "in.txt"
    assert dict(dual.files)[dual.args[2]] == "secret text\n"
    undefended = _explorer([])
    assert list(undefended._with_duals(iter([public, fixed, other]))) == [public, fixed, other]


def test_a_public_call_with_no_data_is_asked_again_with_a_secret_file() -> None:
    """logsum's `count --by` (a usage error): nothing in it to redraw, so before it had no dual
    and the lines only it reached went untested in the defended suite."""
    usage_error = Probe(("count", "--by"))
    explorer = _explorer([usage_error])
    explorer._commands = {"count"}
    explorer._corpus.files = {"app.log": "GET / 200\n"}
    explorer._corpus.texts = ["secret text\n"]
    (dual,) = explorer._with_duals(iter([usage_error]))
    assert dual.origin == "dual" and dual.args[0] == "count" and dual.args[2:] == ("--by",)
    name = dual.args[1]
    assert name.startswith("app-") and name.endswith(".log") and dict(dual.files)[name] == "secret text\n"
    assert probe_key(dual) not in explorer._public and dual.args != usage_error.args  # no table holds it
    bare = _explorer([usage_error])  # nothing to draw a file from: no dual, the call is not run
    assert list(bare._with_duals(iter([usage_error]))) == []


def test_a_probe_the_replay_dummy_answers_as_the_gold_is_not_kept_its_lines_stay_open() -> None:
    """The filter's replay dummy would drop its test (17 of logsum's kept tests), and the lines
    credited to it would go untested: the explorer leaves it out and asks its duals instead."""
    table = replay_table(PROBES, OUTCOMES, [0, 1])
    secret = Probe(("-n", "d-4e1f.csv"), files=(("d-4e1f.csv", "q,r\n5,6\n"),))  # a key no table has
    defended = _explorer([])
    defended._replay = table
    defended._corpus.texts = ["secret text\n"]
    defended._absorb([secret], [OUTCOMES[2]])  # "2 rows": the commonest answer to `-n FILE`
    assert defended.state.kept == [] and defended.state.replayed == 1 and defended.state.covered == {}
    assert defended._pending  # its duals, with other data, are asked next
    defended._pending.clear()
    dual = dataclasses.replace(
        secret, args=("-n", "d-77aa.csv"), files=(("d-77aa.csv", "q,r\n5,6\n"),), origin="dual"
    )
    defended._absorb([dual], [OUTCOMES[2]])  # replayed again: no duals of a dual (they looped)
    assert defended.state.replayed == 2 and defended._pending == []
    other = _out("1 row\n")  # an answer the table does not give: a test of the rebuild
    defended._absorb([secret], [other])
    assert [k.probe for k in defended.state.kept] == [secret]
    undefended = _explorer([])  # no table (no_logic off): kept, as the filter would then drop it
    undefended._absorb([secret], [OUTCOMES[2]])
    assert [k.probe for k in undefended.state.kept] == [secret] and undefended.state.replayed == 0


def test_a_dual_reads_other_records_of_the_sample_not_the_sample() -> None:
    """A dual of `count data/access.log` kept the documented file's content under a new name:
    a table keyed by argv without file names answered it. Its records are redrawn instead (the
    format kept: the same code reads them), and no two secret seeds draw the same."""
    from taskfoundry.kinds.program.testgen.explorer import other_lines

    sample = "".join(f'10.0.0.{i} - - [10/Mar/2024] "GET /{i}" 200 {i}\n' for i in range(30))
    header = "host,status\n" + sample
    drawn = {other_lines(header, random.Random(seed)) for seed in range(50)}
    assert len(drawn) == 50 and header not in drawn
    for text in drawn:
        lines = text.splitlines(keepends=True)
        assert lines[0] == "host,status\n" and set(lines[1:]) <= set(sample.splitlines(keepends=True))
        assert len(lines) - 1 > len(set(lines[1:]))  # one record twice: not a subset of lines alone
    probe = Probe(("count", "access.log"), files=(("access.log", sample),))
    dual = other_data(probe, [], random.Random(3))
    assert dict(dual.files)["access.log"] != sample and probe_key(dual) != probe_key(probe)


def test_an_unknown_option_and_a_missing_file_are_secret_words() -> None:
    """`count --bogus` and `count missing-file.txt` are every worker's calls, and their errors
    name the word: a secret word makes the same error a test no table holds (logsum's lines
    for an unknown option and an unopenable file were reached only with the defences off)."""
    from taskfoundry.kinds.program.testgen.inputs import Corpus

    calls = [p.args for p in _explorer([])._systematic(("count",), [], Corpus())]
    unknown, missing = calls[1][1], calls[2][1]
    assert unknown.startswith("--") and unknown != "--bogus" and len(unknown) == 8
    assert missing.startswith("missing-") and missing != "missing-file.txt"
    other = [p.args for p in _explorer([])._systematic(("count",), [], Corpus())]
    assert other == calls  # the same seed draws the same words
    off = _explorer([])
    off.config = ExplorerConfig(seed=3, no_logic=False)
    assert [p.args for p in off._systematic(("count",), [], Corpus())][1:3] == [
        ("count", "--bogus"),
        ("count", "missing-file.txt"),
    ]


def test_a_word_that_only_ever_prints_the_version_is_not_run_again() -> None:
    explorer = _explorer([])
    version = _out("tool 1.0\n")
    explorer._absorb([Probe(("--version",))], [version])
    runs = [Probe(("count", "--version", f"f{i}")) for i in range(3)]
    explorer._absorb(runs, [version] * 3)
    helped = Probe(("count", "--help"))  # a command's own help: another text, so --help stays
    explorer._absorb([Probe(("--help",)), helped], [_out("usage: tool\n"), _out("usage: count\n")])
    later = [Probe(("top", "--version", "g")), Probe(("top", "--help")), Probe(("top", "g"))]
    assert list(explorer._with_duals(iter(later))) == later[1:]
    assert explorer.state.printer_skipped == 1
    off = _explorer([])
    off.config = ExplorerConfig(seed=3, no_logic=False)
    off._absorb([Probe(("--version",)), *runs], [version] * 4)
    assert list(off._with_duals(iter(later))) == later


def test_the_public_set_holds_what_the_cleanroom_s_docs_give(tmp_path: Path) -> None:
    """An attacker draws from the cleanroom's docs, not the repository's (libidn2: the two
    shared 2,307 of 4,407 probes, and a table of the rest passed 5.4% of its tests)."""
    from taskfoundry.kinds.program.testgen.explorer import (
        NO_DATA,
        public_probes,
        public_probes_of,
        public_views,
    )

    readme = "# tool\n\n```\ntool -n 3 data.txt\ntool --upper < in.txt\n```\n\nhello world\n"
    repo, clean = tmp_path / "repo", tmp_path / "clean"
    for tree in (repo, clean):
        tree.mkdir()
        (tree / "README.md").write_text(readme)
    (repo / "GUIDE.md").write_text(
        "# guide\n\n```\ntool -n 7 notes.txt\n```\n\nthe quick brown fox\n"
    )  # not shipped
    usage = {"": "usage: tool [-n N] [--upper] [FILE]\n"}
    cfg = ExplorerConfig(seed=None)
    worker = {probe_key(p) for p in public_probes(cfg, NO_DATA, clean, {"tool"}, usage, 300)}
    defended = public_probes_of(cfg, public_views(repo, NO_DATA, clean), {"tool"}, usage, 300)
    assert worker <= {probe_key(p) for p in defended}
    repo_only = {
        probe_key(p) for p in public_probes_of(cfg, public_views(repo, NO_DATA, None), {"tool"}, usage, 300)
    }
    assert not worker <= repo_only  # the defence off: the repository's view misses some
