"""The explorer on a real coverage build: reproducible by seed, clean on budget exhaustion."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from taskfoundry import sections
from taskfoundry.builders.build import COV_ROOT, COVERAGE, GOLD
from taskfoundry.config import Config
from taskfoundry.errors import GenerationError
from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen import docfiles
from taskfoundry.kinds.program.testgen import explorer as explorer_module
from taskfoundry.kinds.program.testgen.explorer import Explorer
from taskfoundry.kinds.program.testgen.help import capture_usage
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob, install_runner, run_probes
from taskfoundry.kinds.program.testgen.writer import call_timeout, render_tests
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.settings import PROBE_LIMITS
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import DockerSandbox

from conftest import EXAMPLES

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def csvq_build(docker_client, base_image, tmp_path_factory):  # type: ignore[no-untyped-def]
    config = Config(out=tmp_path_factory.mktemp("explorer"))
    src = source_stage(str(EXAMPLES / "csvq"), config.sources, config.work_dir)
    return src, build_stage(src, sections.for_build(config), docker_client)


# What these tests check is another of the explorer's ways, on a few probes that are nearly all
# ones a worker can draw (the fixed ones, the systematic ones) or print the help: leaving those
# out (issue 55) is checked in test_no_logic_units and test_replay_attack_docker
NO_LOGIC_OFF = {"no_logic": False, "seed": 0}  # and one seed: runs compared here draw alike


def _explore(csvq_build, docker_client, tmp_path: Path, **cfg: object):  # type: ignore[no-untyped-def]
    src, build = csvq_build
    job = RunnerJob(executable=COVERAGE, coverage="gcov", cov_root=COV_ROOT, timeout=5)
    # growth 1: max_probes is the budget (the adaptive one is for real builds, not these checks)
    explorer = Explorer(ExplorerConfig.model_validate({"growth": 1.0, **NO_LOGIC_OFF, **cfg}), job, GOLD)
    with DockerSandbox(build.image, PROBE_LIMITS, client=docker_client) as box:
        install_runner(box)
        usage = capture_usage(box, GOLD, 5)
        return explorer.run(box, src.path, {"csvq"}, usage, tmp_path / "probes.jsonl")


def test_same_seed_same_branch(csvq_build, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = _explore(csvq_build, docker_client, tmp_path, seed=7, max_probes=80)
    second = _explore(csvq_build, docker_client, tmp_path, seed=7, max_probes=80)
    files_a, _ = render_tests(first.kept, "csvq", 7)
    files_b, _ = render_tests(second.kept, "csvq", 7)
    assert files_a == files_b and len(first.kept) >= 10
    assert first.covered == second.covered


def test_probe_budget_ends_cleanly_with_partial_branch(
    csvq_build,
    docker_client,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    state = _explore(csvq_build, docker_client, tmp_path, max_probes=40, batch=20, patience=0)
    assert state.exhausted == "probes" and state.probes_run == 40
    assert state.kept and 0 < state.line_rate() < 1
    assert len((tmp_path / "probes.jsonl").read_text().splitlines()) == 40


def test_kept_probes_reach_new_lines_or_new_features(
    csvq_build,
    docker_client,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    state = _explore(csvq_build, docker_client, tmp_path, max_probes=120, min_tests=0)
    assert state.line_rate() > 0.4
    assert len({k.feature for k in state.kept}) >= len(state.kept) // 2
    assert all(k.outcome.writable for k in state.kept)


def test_usage_on_stderr_with_an_error_exit_is_captured(docker_client, base_image) -> None:  # type: ignore[no-untyped-def]
    # figlet's way: no --help, a usage synopsis on stderr and exit 1 for any unknown option
    script = b"#!/bin/sh\necho 'Usage: toy [ -ab ] [ -w width ] [ message ]' >&2\nexit 1\n"
    with DockerSandbox(base_image, PROBE_LIMITS, client=docker_client) as box:
        box.put_file(script, "/tmp/toy", mode=0o755)
        install_runner(box)
        usage = capture_usage(box, "/tmp/toy", 5)
        box.put_file(b"#!/bin/sh\necho 'no such file: --help' >&2\nexit 2\n", "/tmp/plain", mode=0o755)
        assert capture_usage(box, "/tmp/plain", 5) == {}
    assert usage == {"": "Usage: toy [ -ab ] [ -w width ] [ message ]\n"}


def test_a_small_suite_is_topped_up_with_outcomes_no_kept_test_has(
    csvq_build,
    docker_client,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    """GNU hello kept 46 tests, short of a task's 50: probes that reached no new line fill the
    suite up to `min_tests`, each with an outcome of its own."""
    budget = {"max_probes": 70, "batch": 20, "patience": 0}  # past the docs examples (csvq.1 too)
    plain = _explore(csvq_build, docker_client, tmp_path, **budget, min_tests=0)
    topped = _explore(csvq_build, docker_client, tmp_path, **budget, min_tests=len(plain.kept) + 15)
    before = {k.probe.key for k in plain.kept}
    added = [k for k in topped.kept if k.probe.key not in before]
    assert len(plain.kept) < len(topped.kept) <= len(plain.kept) + 15 and added
    outcomes = [repr(k.outcome.signature) for k in topped.kept]
    assert all(outcomes.count(repr(k.outcome.signature)) == 1 for k in added)
    assert all(k.new_lines == 0 for k in added) and topped.covered == plain.covered


# A program slow at its work and quick at its help: each call that does something takes 1.5 s
_SLOW = b"""#!/bin/sh
case "$1" in
  --help|-h) echo 'Usage: slowtoy [--shout] WORD'; echo '  --shout   say it loud'; exit 0 ;;
  --version) echo 'slowtoy 1.0'; exit 0 ;;
esac
sleep 1.5
echo "slowtoy did: $*"
"""
# A program that hangs on everything but its help
_HANGS = _SLOW.replace(b"sleep 1.5", b"sleep 100")


def _explore_script(  # type: ignore[no-untyped-def]
    script: bytes,
    docker_client,
    base_image,
    tmp_path: Path,
    timeout: float = 1,
    parallel: int = 4,
    **cfg: object,
):
    """`script` explored as /tmp/slowtoy. Its probes run four at a time: these programs sleep,
    and one by one they slept 7 minutes of the suite (issue 57); probes run at once give what
    they give one by one (test_probes_run_at_once_give_what_they_give_one_by_one)."""
    budget = {
        "growth": 1.0,
        "max_probes": 12,
        "batch": 12,
        "patience": 0,
        "min_tests": 0,
        **NO_LOGIC_OFF,
        **cfg,
    }
    explorer = Explorer(
        ExplorerConfig.model_validate(budget),
        RunnerJob("/tmp/slowtoy", timeout=timeout, parallel=parallel),
        "/tmp/slowtoy",
    )
    with DockerSandbox(base_image, PROBE_LIMITS, client=docker_client) as box:
        box.put_file(script, "/tmp/slowtoy", mode=0o755)
        install_runner(box)
        usage = capture_usage(box, "/tmp/slowtoy", 5)
        return explorer.run(box, tmp_path, {"slowtoy"}, usage, tmp_path / "probes.jsonl")


def test_a_slow_program_is_explored_with_the_longer_probe_time(
    docker_client, base_image, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """ansible-lint linted a file in 5 s, the probe time: only its quick calls became tests (20).
    Here each call that works takes 1.5 s against a probe time of 1 s; with the defence off (no
    longer time to try) the calls that work are never kept."""
    state = _explore_script(_SLOW, docker_client, base_image, tmp_path, slow_probe_timeout=4)
    worked = [k for k in state.kept if "slowtoy did:" in (k.outcome.stdout or "")]
    assert state.slow_timeout == 4 and len(worked) >= 3
    files, _ = render_tests(state.kept, "slowtoy", 0, 2 * state.slow_timeout)
    assert all("timeout=8)" in line for f in files.values() for line in f.splitlines() if "= run(" in line)

    off = _explore_script(_SLOW, docker_client, base_image, tmp_path, slow_probe_timeout=1)
    assert off.slow_timeout is None
    assert not [k for k in off.kept if "slowtoy did:" in (k.outcome.stdout or "")]


# A program slow at everything, its help too (ansible-lint's coverage build on a busy machine)
_SLOW_ALWAYS = _SLOW.replace(b'case "$1" in', b'sleep 1.5\ncase "$1" in')


def test_a_program_slow_at_its_help_too_is_slow_not_hanging(
    docker_client, base_image, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Every canary probe timing out was "the program hangs", and the source failed; with the
    defence off (no longer time to try) it still does."""
    state = _explore_script(_SLOW_ALWAYS, docker_client, base_image, tmp_path, slow_probe_timeout=4)
    assert state.slow_timeout == 4
    assert [k for k in state.kept if "slowtoy did:" in (k.outcome.stdout or "")]
    with pytest.raises(GenerationError, match="the program hangs"):
        _explore_script(_SLOW_ALWAYS, docker_client, base_image, tmp_path, slow_probe_timeout=1)


def test_a_program_that_hangs_keeps_the_short_probe_time(docker_client, base_image, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The longer time is tried on a sample of the timed-out probes only, and not taken on
    when they hang again: a program that hangs costs that sample, not every probe × 4 s."""
    state = _explore_script(_HANGS, docker_client, base_image, tmp_path, slow_probe_timeout=4)
    assert state.slow_timeout is None
    assert not [k for k in state.kept if "slowtoy did:" in (k.outcome.stdout or "")]


# Each call notes when it started and ended, in a file all probes share
_NOTED = b"""#!/bin/sh
echo "start $1 $(date +%s.%N)" >> /tmp/noted
sleep 1
echo "end $1 $(date +%s.%N)" >> /tmp/noted
echo "probe $1"
"""


def _spans(box: DockerSandbox) -> list[tuple[float, float]]:
    marks: dict[str, dict[str, float]] = {}
    for line in box.get_file("/tmp/noted").decode().splitlines():
        what, name, when = line.split()
        marks.setdefault(name, {})[what] = float(when)
    return sorted((m["start"], m["end"]) for m in marks.values())


@pytest.mark.parametrize("parallel", [1, 2])
def test_probes_run_at_once_give_what_they_give_one_by_one(
    csvq_build, docker_client, base_image, parallel: int
) -> None:  # type: ignore[no-untyped-def]
    """`explorer.parallel` runs a batch's probes at once: each its own work and coverage
    directory, so the outcomes (and gcov's lines of each) are those of one at a time, in order."""
    _, build = csvq_build
    probes = [Probe(args) for args in (("--help",), ("-d", ";"), ("--bogus",), ("-n", "2"), ())]
    serial = RunnerJob(executable=COVERAGE, coverage="gcov", cov_root=COV_ROOT, timeout=5)
    with DockerSandbox(build.image, PROBE_LIMITS, client=docker_client) as box:
        install_runner(box)
        one = run_probes(box, serial, probes)
        many = run_probes(box, dataclasses.replace(serial, parallel=parallel), probes)
    assert [(o.signature, o.covered) for o in many] == [(o.signature, o.covered) for o in one]
    assert all(o.covered for o in one)
    with DockerSandbox(base_image, PROBE_LIMITS, client=docker_client) as box:
        box.put_file(_NOTED, "/tmp/noted.sh", mode=0o755)
        install_runner(box)
        job = RunnerJob("/tmp/noted.sh", timeout=5, parallel=parallel)
        outs = run_probes(box, job, [Probe((str(i),)) for i in range(4)])
        spans = _spans(box)
    assert [o.stdout for o in outs] == [f"probe {i}\n" for i in range(4)]
    overlaps = sum(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:], strict=False))
    assert overlaps == 0 if parallel == 1 else overlaps >= 1  # one by one: no call began before one ended


# A gold that cannot start the program: every call ends in the same error (ansible-lint's
# zipapp: no `ansible` on PATH), while the coverage build answers each call its own way
_BROKEN_GOLD = b"#!/bin/sh\necho \"Failed to find runtime dependency 'ansible' in PATH\" >&2\nexit 1\n"
_WORKS = b"""#!/bin/sh
case "$1" in
  --help) echo 'Usage: toy [--shout] [--count N] WORD'; echo '  --shout  loud'; echo '  --count N  times' ;;
  *) echo "toy: $*" ;;
esac
"""


@pytest.mark.parametrize("defence", [True, False])
def test_a_gold_that_answers_everything_alike_fails_generation(
    docker_client, base_image, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, defence: bool
) -> None:  # type: ignore[no-untyped-def]
    """Defence off: 23 kept tests that all expect one error message, and nothing says so."""
    if not defence:
        monkeypatch.setattr(explorer_module, "_gold_answers_all_alike", lambda *a: None)
    budget = {"growth": 1.0, "max_probes": 20, "batch": 20, "patience": 0, "min_tests": 0, **NO_LOGIC_OFF}
    explorer = Explorer(ExplorerConfig.model_validate(budget), RunnerJob("/tmp/cov", timeout=5), "/tmp/gold")
    with DockerSandbox(base_image, PROBE_LIMITS, client=docker_client) as box:
        box.put_file(_WORKS, "/tmp/cov", mode=0o755)
        box.put_file(_BROKEN_GOLD, "/tmp/gold", mode=0o755)
        install_runner(box)
        usage = capture_usage(box, "/tmp/cov", 5)
        if defence:
            with pytest.raises(GenerationError, match="the gold answered all .* alike .*runtime dependency"):
                explorer.run(box, tmp_path, {"toy"}, usage, tmp_path / "probes.jsonl")
        else:
            state = explorer.run(box, tmp_path, {"toy"}, usage, tmp_path / "probes.jsonl")
            assert len(state.kept) >= 5 and len({repr(k.outcome.signature) for k in state.kept}) == 1


# A program that reads its configuration from the directory it runs in, under a name no
# argument gives (appstream-generator's asgen-config.json): without it every call fails alike
_CONFIGURED = b"""#!/bin/sh
case "$1" in
  --help|-h) echo 'Usage: slowtoy COMMAND [ARG]'; echo; echo 'Commands:'
    echo '  list    list the suites'; echo '  show    show one suite'; echo '  count   count the suites'
    exit 0 ;;
esac
[ -f toy-config.json ] || { echo "Unable to load configuration: toy-config.json: no such file" >&2; exit 4; }
case "$1" in
  list) grep -o '"[a-z]*": {"sections' toy-config.json | cut -d'"' -f2 ;;
  show) grep -o "\\"$2\\": {[^}]*}" toy-config.json || { echo "no suite: $2" >&2; exit 3; } ;;
  count) grep -o '"sections' toy-config.json | wc -l ;;
  *) echo "unknown command: $1" >&2; exit 2 ;;
esac
"""
_CONFIG_PAGE = """An example `toy-config.json` may look like this:
```json
{"Suites": {"sid": {"sections": ["main"]}, "trixie": {"sections": ["main", "contrib"]}}}
```
Then, in that directory:
```sh
slowtoy show trixie
```
"""


def test_a_config_the_docs_show_is_put_where_the_program_runs(
    docker_client, base_image, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """appstream-generator kept 39 tests, every call but --help ending at "Unable to load
    configuration": its docs show the asgen-config.json it looks for in its directory. With
    the docs' file in place the commands do their work; with no such page (the defence off),
    no call gets past the missing configuration."""
    budget = {"max_probes": 40, "batch": 20}
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "config.md").write_text(_CONFIG_PAGE)
    state = _explore_script(_CONFIGURED, docker_client, base_image, tmp_path, **budget)
    worked = {
        k.probe.args[0]: k for k in state.kept if k.outcome.exit_code == 0 and k.probe.args[:1] != ("--help",)
    }
    assert {"list", "show", "count"} <= set(worked)
    assert worked["list"].outcome.stdout == "sid\ntrixie\n"
    assert all(
        dict(k.probe.files).get("toy-config.json", "").startswith('{"Suites"') for k in worked.values()
    )
    files, _ = render_tests(state.kept, "slowtoy", 0, 2)
    assert any("toy-config.json" in text for text in files.values())

    bare = tmp_path / "bare"
    bare.mkdir()
    off = _explore_script(_CONFIGURED, docker_client, base_image, bare, **budget)
    assert {k.outcome.exit_code for k in off.kept if k.probe.args[:1] not in (("--help",), ("-h",))} <= {4}


# The same toy, whose configuration names the directory it works in: the docs' example names
# one of the author's machine (appstream-generator's ArchiveRoot, /srv/archive.tanglu.org/tanglu/)
_ROOTED = _CONFIGURED.replace(
    b"""case "$1" in
  list)""",
    b"""root=$(sed -n 's/.*"Root": "\\([^"]*\\)".*/\\1/p' toy-config.json)
[ -d "$root" ] || { echo "Directory '$root' does not exist." >&2; exit 1; }
case "$1" in
  list)""",
)
_ROOTED_PAGE = _CONFIG_PAGE.replace('{"Suites"', '{"Root": "/srv/toy/archive/", "Suites"')


@pytest.mark.parametrize("rooted", ["made", "defence-off"])
def test_a_directory_the_docs_config_names_is_made_where_the_program_runs(
    rooted: str, docker_client, base_image, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """appstream-generator kept 47 tests with its docs' config in place: that config names
    /srv/archive.tanglu.org/tanglu/, and every call ended at "Directory ... does not exist".
    The config is given with the directory relative, and the directory is made beside it;
    with the defence off (the config as the docs show it) no call gets past the check."""
    if rooted == "defence-off":
        monkeypatch.setattr(docfiles, "rooted", lambda name, body: {name: body})
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "config.md").write_text(_ROOTED_PAGE)
    state = _explore_script(_ROOTED, docker_client, base_image, tmp_path, max_probes=40, batch=20)
    worked = {
        k.probe.args[0] for k in state.kept if k.outcome.exit_code == 0 and k.probe.args[0:1] != ("--help",)
    }
    if rooted == "defence-off":
        assert not worked - {"-h"}
        return
    assert {"list", "count"} <= worked
    files, _ = render_tests(state.kept, "slowtoy", 0, 2)
    assert any(f"srv/toy/archive/{docfiles.KEEP}" in text for text in files.values())


# A program that keeps a database (not text, other bytes each call) beside its output, as
# appstream-generator's LMDB files
_DATABASE = b"""#!/bin/sh
case "$1" in
  --help|-h) echo 'Usage: slowtoy COMMAND'; echo; echo 'Commands:'
    echo '  add     add an entry'; echo '  forget  forget an entry'; exit 0 ;;
  add|forget) mkdir -p db; head -c 32 /dev/urandom > db/data.mdb; printf '\\377' >> db/data.mdb
    echo "$1: ${2:-nothing}" ;;
  *) echo "unknown command: $1" >&2; exit 2 ;;
esac
"""


@pytest.mark.parametrize("rule", ["written", "defence-off"])
def test_calls_that_write_a_database_become_tests(
    rule: str, docker_client, base_image, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """appstream-generator's calls past its config write LMDB databases, and an outcome with a
    file that is not text was no test: none of them was kept. They are kept now, the database
    tested as written; with the defence off (such an outcome no test) none is."""
    if rule == "defence-off":
        old = Outcome.writable.fget  # type: ignore[attr-defined]
        monkeypatch.setattr(Outcome, "writable", property(lambda o: old(o) and None not in o.files.values()))
    state = _explore_script(_DATABASE, docker_client, base_image, tmp_path, max_probes=30, batch=15)
    wrote = [k for k in state.kept if "db/data.mdb" in k.outcome.files]
    if rule == "defence-off":
        assert not wrote
        return
    assert {k.probe.args[0] for k in wrote} == {"add", "forget"}
    assert all(k.outcome.files == {"db/data.mdb": None} and k.outcome.exit_code == 0 for k in wrote)
    files, _ = render_tests(state.kept, "slowtoy", 0, 2)
    assert sum(text.count("assert (tmp_path / 'db/data.mdb').is_file()") for text in files.values()) == len(
        wrote
    )


# Quick at all but one option, which takes 3 s: within the 5 s probe time, so exploring does
# not find the program slow, but more than a quarter of tfrun's 10 s a test's call gets
_SLOW_ONE = _SLOW.replace(b"sleep 1.5\n", b'case "$1" in --shout) sleep 3 ;; esac\n')


@pytest.mark.parametrize("headroom", [explorer_module.HEADROOM, 0], ids=["gold-times", "defence-off"])
def test_a_gold_slow_on_a_kept_test_makes_the_program_slow(
    headroom: int, docker_client, base_image, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """ansible-lint's gold took 3 to 5 s a call and its tests gave each call 10 s: on a busy
    machine its reference graded 0.62, every failure a timeout. The gold's own times on the
    kept tests make the program slow, and its tests give each call twice the slow probe time;
    with the defence off they give tfrun's 10 s to a call that takes 3."""
    monkeypatch.setattr(explorer_module, "HEADROOM", headroom)
    job_timeout = 5  # not slow while exploring: every probe runs within it
    state = _explore_script(
        _SLOW_ONE,
        docker_client,
        base_image,
        tmp_path,
        timeout=job_timeout,
        slow_probe_timeout=6,
        max_probes=16,
    )
    shouted = [k for k in state.kept if k.probe.args[:1] == ("--shout",)]
    assert shouted and all(3 <= k.outcome.seconds < job_timeout for k in shouted)
    files, _ = render_tests(state.kept, "slowtoy", 0, call_timeout(state.slow_timeout))
    calls = [line for f in files.values() for line in f.splitlines() if "= run(" in line]
    if headroom:
        assert state.slow_timeout == 6 and calls and all("timeout=12)" in line for line in calls)
    else:
        assert state.slow_timeout is None and not any("timeout=" in line for line in calls)


# Each call takes a second and answers alike: nothing is kept, every probe runs its second
_SECOND_EACH = b"""#!/bin/sh
case "$1" in
  --help|-h) echo 'Usage: slowtoy [--shout] [--quiet] WORD'; echo '  --shout   say it loud'; exit 0 ;;
esac
sleep 1
echo same
"""


@pytest.mark.parametrize("deadline", [True, False], ids=["deadline", "defence-off"])
def test_exploring_starts_no_probe_past_its_budget(
    deadline: bool, docker_client, base_image, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The budget was checked between batches only, and one batch of a slow program's probes
    (40 × 20 s) runs minutes past it: the runner now starts none past what the budget leaves.
    Here the first batch of 12 one-second probes leaves about 6 s of 18; with the defence off
    the second batch runs all its 12."""
    if not deadline:
        monkeypatch.setattr(Explorer, "_until", lambda self, start: self.job)
    budget = {"max_probes": 24, "batch": 12, "max_seconds": 18, "max_feature_tests": 0, "timeout": 5}
    with pytest.raises(GenerationError, match="no probe gave a reproducible result"):
        # one by one: the budget's arithmetic below counts one-second probes in a row
        _explore_script(_SECOND_EACH, docker_client, base_image, tmp_path, parallel=1, **budget)
    logged = [json.loads(line) for line in (tmp_path / "probes.jsonl").read_text().splitlines()]
    second = logged[12:]
    started = [p for p in second if not p["not_run"]]
    assert len(second) == 12 and all(p["seconds"] >= 1 for p in started)
    if deadline:
        assert 0 < len(started) < 12 and all(p["timed_out"] for p in second if p["not_run"])
    else:
        assert len(started) == 12
