"""The explorer's test writer: valid Python, names that match JUnit, clean under the linter."""

from __future__ import annotations

import ast
import base64
import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

from taskfoundry.assets import asset
from taskfoundry.kinds.program.testgen.dummy_check import dummy_passing
from taskfoundry.kinds.program.testgen.explorer import Kept
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe
from taskfoundry.kinds.program.testgen.writer import render_tests
from taskfoundry.linters import lint_source


def _kept(args: tuple[str, ...], code: int, out: str, err: str = "", **kw: object) -> Kept:
    probe = Probe(args, stdin=str(kw.get("stdin", "")), files=tuple(kw.get("files", {}).items()))  # type: ignore[attr-defined]
    files = kw.get("written", {})
    outcome = Outcome(code, out, err, False, False, files)  # type: ignore[arg-type]
    return Kept(probe, outcome, "f")


KEPT = [
    _kept(("select", "-c", "name", "in.csv"), 0, "name\nAlice\n", files={"in.csv": "name\nAlice\n"}),
    _kept(("--bogus",), 2, "", "tool: unknown option '--bogus'\n"),
    _kept(("count",), 0, "3\n", stdin="a\nb\nc\n"),
    _kept(("--out", "o.txt", "head", "in.csv"), 0, "", files={"in.csv": "x\n"}, written={"o.txt": "x\n"}),
]


def test_rendered_tests_parse_and_are_named_for_junit() -> None:
    files, written = render_tests(KEPT, "tool", 0)
    for source in files.values():
        ast.parse(source)
    assert {w.file for w in written} == set(files)
    assert all(w.junit_name.startswith("eval.tests.test_") for w in written)
    assert len({w.junit_name for w in written}) == len(KEPT)


def test_rendered_tests_lint_clean() -> None:
    files, _ = render_tests(KEPT, "tool", 0)
    for name, source in files.items():
        result = lint_source(source, name)
        assert [f for f in result.findings if f.severity in ("HIGH", "MED")] == []


def test_shared_input_files_written_once_per_module() -> None:
    files, _ = render_tests(KEPT, "tool", 0)
    assert files["test_select.py"].count("'name\\nAlice\\n'") == 2  # FILES entry + expected stdout


def test_dummy_check_matches_each_dummy() -> None:
    usage = "Usage: tool\n"
    cases = {
        "silent": (Probe(("x",)), Outcome(0, "", "", False, False, {})),
        "fail": (Probe(("x",)), Outcome(1, "", "", False, False, {})),
        "echo": (Probe(("a", "b")), Outcome(0, "a b\n", "", False, False, {})),
        "cat": (Probe(("-",), stdin="hi\n"), Outcome(0, "hi\n", "", False, False, {})),
        "usage": (Probe(("-h",)), Outcome(0, usage, "", False, False, {})),
        "usage-err": (Probe(("?",)), Outcome(1, "", usage, False, False, {})),
    }
    for name, (probe, out) in cases.items():
        assert dummy_passing(probe, out, usage) == name
    real = Outcome(0, "3\n", "", False, False, {})
    assert dummy_passing(Probe(("count",), stdin="a\n"), real, usage) is None
    wrote = Outcome(0, "", "", False, False, {"o.txt": "x"})
    assert dummy_passing(Probe(("x",)), wrote, usage) is None


def test_binary_stdin_round_trips_through_the_written_test(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    blob = b"\x00\xff\x10ab\n"
    argv = ("-An", "-tx1")
    ran = subprocess.run(["od", *argv], input=blob, capture_output=True, check=True)
    kept = Kept(Probe(argv, stdin=blob), Outcome(0, ran.stdout.decode(), "", False, False, {}), "f")
    files, written = render_tests([kept], "od", 0)
    assert "stdin=b'\\x00\\xff\\x10ab\\n'" in files[written[0].file]
    tests = tmp_path / "eval" / "tests"
    tests.mkdir(parents=True)
    (tests / "tfrun.py").write_bytes(asset("grading/tfrun.py"))
    for name, source in files.items():
        (tests / name).write_text(source)
    env = {"TF_EXECUTABLE": shutil.which("od") or "/usr/bin/od", "PATH": "/usr/bin:/bin"}
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert dummy_passing(Probe((), stdin=b"hi\n"), Outcome(0, "hi\n", "", False, False, {}), "") == "cat"
    assert dummy_passing(Probe((), stdin=b"\xff"), Outcome(0, "", "", False, False, {}), "") == "silent"


def test_runtime_traces_are_recognised() -> None:
    from taskfoundry.kinds.program.testgen.explorer import runtime_trace

    def out(err: str) -> Outcome:
        return Outcome(1, "", err, False, False, {})

    assert runtime_trace(out('Traceback (most recent call last):\n  File "/x/main.py", line 3\nE: boom\n'))
    assert runtime_trace(out("thread 'main' panicked at src/main.rs:12:5:\nindex out of bounds\n"))
    assert runtime_trace(out("panic: runtime error\n\ngoroutine 1 [running]:\nmain.main()\n"))
    assert not runtime_trace(out("tool: cannot open 'x': No such file or directory\n"))
    assert not runtime_trace(out("the traceback (most recent call last) is not shown\n"))


def test_each_written_test_names_its_own_probe() -> None:
    """Tests are written grouped by command, not in the order of the kept probes: the per-test
    coverage the explorer records must follow `WrittenTest.kept`, not the position."""
    files, written = render_tests(KEPT, "tool", 0)
    assert [w.kept for w in written] != list(range(len(KEPT)))  # the grouping reorders them
    for w in written:
        body = files[w.file].split(f"def {w.function}(")[1].split("\ndef ")[0]
        assert f"run({list(KEPT[w.kept].probe.args)!r}" in body


def test_an_outcome_showing_today_s_date_is_no_exact_output_test() -> None:
    """gobuster's log line `2026/11/27 20:31:53 ...` passed two gold runs in one second and
    failed the reference's grade minutes later: a clock's output is not pinned."""
    from datetime import UTC, datetime

    now = datetime.now(UTC)

    def outcome(stdout: str) -> Outcome:
        return Outcome(0, stdout, "", False, False, {})

    clocks = (f"{now:%Y/%m/%d %H:%M:%S} wordlist", f"built {now:%Y-%m-%d}", f"{now:%a %b} {now.day:2d} x")
    for clock in clocks:
        assert not outcome(clock).writable, clock
    assert outcome("released 2021/03/04 10:00:00\n").writable  # a date that is no clock's
    go = "path\tgithub.com/OJ/gobuster/v3\nbuild\tCGO_ENABLED=0\nbuild\tGOAMD64=v1\n"
    assert not outcome(go).writable  # how the gold was built: no rebuild prints it back


def test_an_outcome_naming_where_the_python_gold_unpacked_itself_is_no_test() -> None:
    """dirsearch prints its own install path, `/tmp/tf-app-<content key>/...`: the reference
    rebuilt in the cleanroom unpacks under another key (graded 0.98 on those tests alone), and
    so would any rebuild."""
    from taskfoundry.builders.detect_python import _MAIN

    assert '"tf-app-" + key' in _MAIN and "hexdigest()[:24]" in _MAIN  # the pattern's source
    key = "3f2a9c0d1e4b5a6978c0d1e2"
    said = f"Config file not found: /tmp/tf-app-{key}/dirsearch/config.ini\n"
    assert not Outcome(2, "", said, False, False, {}).writable
    assert not Outcome(0, "", "", False, False, {"report.txt": said}).writable  # in a file it wrote
    assert Outcome(0, "see /tmp/tf-app-notes\n", "", False, False, {}).writable  # no key: not the unpack


def _pytest(tmp_path, files: dict[str, str], program: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    tests = tmp_path / "eval" / "tests"
    tests.mkdir(parents=True, exist_ok=True)
    (tests / "tfrun.py").write_bytes(asset("grading/tfrun.py"))
    for name, source in files.items():
        (tests / name).write_text(source)
    env = {"TF_EXECUTABLE": program, "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)]
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)


def _script(path, body: str) -> str:  # type: ignore[no-untyped-def]
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_a_clock_in_the_output_is_compared_masked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """gobuster logs every error behind Go's clock (`2026/11/27 22:06:45 Required flags...`):
    the explorer writes today's stamps `<clock>` and the test compares through tfrun's `clock`,
    so the message is pinned and the time is not."""
    from taskfoundry.kinds.program.testgen.probes import _outcome, mask_clock

    said = "error: no url\n"
    gold = _script(tmp_path / "gold", f"date -u '+%Y/%m/%d %H:%M:%S {said.strip()}' >&2; exit 1")
    ran = subprocess.run([gold], capture_output=True, text=True)
    raw = {"exit_code": 1, "stdout": {"text": ""}, "stderr": {"text": ran.stderr}, "timed_out": False}
    out = _outcome({**raw, "truncated": False, "files": {}})
    assert out.stderr == "<clock> " + said and out.writable
    assert mask_clock("released 2021/03/04 10:00:00\n") == "released 2021/03/04 10:00:00\n"  # data
    files, _ = render_tests([Kept(Probe(("dir",)), out, "f")], "tool", 0)
    source = files["test_dir.py"]
    assert (
        "from tfrun import clock, run" in source and "assert clock(result.stderr) == '<clock> error" in source
    )
    assert [f for f in lint_source(source, "test_dir.py").findings if f.severity in ("HIGH", "MED")] == []
    later = _script(tmp_path / "later", f"echo '1999-01-02T03:04:05Z {said.strip()}' >&2; exit 1")
    assert _pytest(tmp_path / "a", files, later).returncode == 0  # another clock: the same behaviour
    wrong = _script(tmp_path / "wrong", "date -u '+%Y/%m/%d %H:%M:%S error: no URL' >&2; exit 1")
    assert _pytest(tmp_path / "b", files, wrong).returncode == 1  # another message: caught
    # the defence off: the stamp pinned as printed fails the gold itself a second later
    pinned, _ = render_tests(
        [Kept(Probe(("dir",)), dataclasses.replace(out, stderr=ran.stderr), "f")], "tool", 0
    )
    time.sleep(1.1)
    assert _pytest(tmp_path / "c", pinned, gold).returncode == 1


def test_a_suite_names_the_program_it_calls_by_its_own_name(tmp_path: Path) -> None:
    from taskfoundry.kinds.program.testgen.stage import suite_argv0, write_suite
    from taskfoundry.layout import WORKSPACE_EXECUTABLE

    write_suite(tmp_path / "plain", {"test_a.py": "def test_a():\n    pass\n"})
    assert not (tmp_path / "plain" / "eval" / "tests" / "program.json").exists()
    assert suite_argv0(tmp_path / "plain") == WORKSPACE_EXECUTABLE
    write_suite(tmp_path / "multi", {"test_a.py": "def test_a():\n    pass\n"}, "/workspace/diffutils")
    text = (tmp_path / "multi" / "eval" / "tests" / "program.json").read_text()
    assert json.loads(text) == {"called_as": "diffutils"}
    assert suite_argv0(tmp_path / "multi") == "/workspace/diffutils"
    # a bad file names no program, as tfrun reads it (test_tfrun_units): the call stays the
    # workspace's executable, never a path outside it
    for bad in ('{"called_as": "../elsewhere"}', "not json", '["multi"]', '{"called_as": 3}'):
        (tmp_path / "multi" / "eval" / "tests" / "program.json").write_text(bad)
        assert suite_argv0(tmp_path / "multi") == WORKSPACE_EXECUTABLE, bad


def _probe_on_host(
    tmp_path: Path, gold: str, probe: Probe, masked: bool = True, stripped: bool = True
) -> Outcome:
    """One probe through the real probe runner, run on the host (`masked` False: its `here`
    hands the output on as it is; `stripped` False: the outcome keeps the lines naming where a
    Python gold unpacked itself)."""
    from taskfoundry.kinds.program.testgen import probes as host
    from taskfoundry.kinds.program.testgen.probes import RunnerJob, _outcome

    (tmp_path / "runs").mkdir(exist_ok=True)
    job = RunnerJob(executable=gold, argv0=gold, workroot=str(tmp_path / "runs"))
    payload = {**job.__dict__, "probes": [probe.to_job("p0")]}
    runner = tmp_path / "probe_runner.py"
    code = asset("program/probe_runner.py").decode()
    unmasked = code.replace('    if "text" not in decoded:\n', "    if True:\n")
    assert unmasked != code
    runner.write_text(code if masked else unmasked)
    ran = subprocess.run(
        [sys.executable, str(runner)], input=json.dumps(payload), capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)["results"][0]
    if stripped:
        return _outcome(result)
    keep, host.unpacked = host.unpacked, lambda text: text  # type: ignore[assignment]
    try:
        return _outcome(result)
    finally:
        host.unpacked = keep


def test_the_call_s_own_directory_in_the_output_is_compared_masked(tmp_path: Path) -> None:
    """ansible-lint names its HOME's .ansible in every lint, and each run has a directory of
    its own: the probe runner writes it `<cwd>`, and the test compares through tfrun's `here`,
    so the rest is pinned and the directory is not."""
    gold = _script(tmp_path / "gold", 'echo "config in $HOME/.cfg"; echo "no $PWD/x.yml" >&2; exit 2')
    out = _probe_on_host(tmp_path, gold, Probe(("lint",)))
    assert (out.stdout, out.stderr) == ("config in <cwd>/.cfg\n", "no <cwd>/x.yml\n") and out.writable
    files, _ = render_tests([Kept(Probe(("lint",)), out, "f")], "tool", 0)
    source = files["test_lint.py"]
    assert "from tfrun import here, run" in source and "assert here(result.stdout, tmp_path) ==" in source
    assert [f for f in lint_source(source, "test_lint.py").findings if f.severity in ("HIGH", "MED")] == []
    assert _pytest(tmp_path / "a", files, gold).returncode == 0  # pytest's tmp_path: the same behaviour
    wrong = _script(tmp_path / "wrong", 'echo "config in /root/.cfg"; echo "no $PWD/x.yml" >&2; exit 2')
    assert _pytest(tmp_path / "b", files, wrong).returncode == 1  # another directory: caught
    # the defence off: the directory pinned as the probe saw it fails the gold itself
    pinned = _probe_on_host(tmp_path, gold, Probe(("lint",)), masked=False)
    assert "<cwd>" not in (pinned.stdout or "") and str(tmp_path / "runs") in (pinned.stdout or "")
    files, _ = render_tests([Kept(Probe(("lint",)), pinned, "f")], "tool", 0)
    assert _pytest(tmp_path / "c", files, gold).returncode == 1


# what a Python gold built by taskfoundry prints where a warning comes from its own code: the
# path it unpacked itself to (ansible-lint: every lint, "Project directory /.ansible cannot be
# used for caching"), then the warning's source line
_WARNED = (
    'echo "WARNING  Project directory /.ansible is not writable." >&2\n'
    'echo "/tmp/tf-app-ed573e4ad3bef837006dee4e/ansible_compat/runtime.py:243: UserWarning: cache" >&2\n'
    'echo "  self.cache_dir = get_cache_dir(self.project_dir)" >&2\n'
    'echo "Passed: 1 file(s) of 1 encountered."; exit 0'
)


def test_lines_naming_where_a_python_gold_unpacked_itself_are_no_part_of_the_output(tmp_path: Path) -> None:
    """ansible-lint's every call printed a warning naming `/tmp/tf-app-<key>`, where its gold
    unpacked itself, and no rebuild does: 20 of 30 of its probes were no test. Those lines (and
    the source line under each) are left out on both sides, the rest is pinned."""
    from taskfoundry.assets.grading.tfrun import unpacked

    gold = _script(tmp_path / "gold", _WARNED)
    out = _probe_on_host(tmp_path, gold, Probe(("lint",)))
    assert out.stderr == "WARNING  Project directory /.ansible is not writable.\n" and out.writable
    files, _ = render_tests([Kept(Probe(("lint",)), out, "f")], "tool", 0)
    assert _pytest(tmp_path / "a", files, gold).returncode == 0  # the gold itself
    plain = _WARNED.replace("tf-app-ed573e4ad3bef837006dee4e", "tf-app-" + "0" * 24)
    assert _pytest(tmp_path / "b", files, _script(tmp_path / "rebuilt", plain)).returncode == 0  # another key
    quiet = "\n".join(line for line in _WARNED.splitlines() if "tf-app" not in line and "self." not in line)
    assert _pytest(tmp_path / "c", files, _script(tmp_path / "quiet", quiet)).returncode == 0  # no such lines
    wrong = _WARNED.replace("1 file(s)", "2 file(s)")
    assert (
        _pytest(tmp_path / "d", files, _script(tmp_path / "wrong", wrong)).returncode == 1
    )  # the rest pinned
    # a traceback through the gold's own files: each frame's path and its source line go
    trace = 'Traceback:\n  File "/tmp/tf-app-{k}/a.py", line 3, in f\n    f()\nValueError: x\n'
    assert unpacked(trace.format(k="a" * 24)) == "Traceback:\nValueError: x\n"
    assert unpacked("no path here\n  indented\n") == "no path here\n  indented\n"
    # the defence off: the runner's outcome as it was printed is no test at all
    raw = _probe_on_host(tmp_path, gold, Probe(("lint",)), masked=False, stripped=False)
    assert "tf-app-ed573e4ad3bef837006dee4e" in (raw.stderr or "") and not raw.writable


def test_a_file_written_that_is_not_text_is_tested_as_written(tmp_path: Path) -> None:
    """appstream-generator writes LMDB databases (db/main/data.mdb) on every call that gets past
    its config: those calls were never tests, each outcome holding a file that is not text.
    The test now pins the output and that the file is written, not its bytes (they need not
    repeat). tests/test_explorer_docker.py runs the explorer on such a program, defence off too."""
    from taskfoundry.kinds.program.testgen.probes import _outcome

    body = (
        "mkdir -p db; head -c 64 /dev/urandom > db/data.mdb; printf '\\377' >> db/data.mdb; echo 'forgot 0'"
    )
    gold = _script(tmp_path / "gold", body)
    workdir = tmp_path / "w"
    workdir.mkdir()
    ran = subprocess.run([gold], capture_output=True, cwd=workdir)
    blob = base64.b64encode((workdir / "db" / "data.mdb").read_bytes()).decode()
    raw = {
        "exit_code": 0,
        "stdout": {"text": ran.stdout.decode()},
        "stderr": {"text": ""},
        "timed_out": False,
    }
    out = _outcome({**raw, "truncated": False, "files": {"db/data.mdb": {"b64": blob}}})
    assert out.files == {"db/data.mdb": None} and out.writable
    files, _ = render_tests([Kept(Probe(("forget",)), out, "f")], "tool", 0)
    assert "assert (tmp_path / 'db/data.mdb').is_file()" in files["test_forget.py"]
    assert _pytest(tmp_path / "a", files, gold).returncode == 0  # other random bytes: the same behaviour
    unwritten = _script(tmp_path / "unwritten", "echo 'forgot 0'")
    assert _pytest(tmp_path / "b", files, unwritten).returncode == 1  # no database: caught
    said = _script(tmp_path / "said", body.replace("forgot 0", "forgot 1"))
    assert _pytest(tmp_path / "c", files, said).returncode == 1  # other output: caught


def test_two_tests_writing_one_file_name_with_other_contents_each_get_their_own(tmp_path: Path) -> None:
    """A dual's secret data under the documented `data/access.log` and the documented data
    itself: FILES held one content per name, and 17 of logsum's tests failed on the gold with
    another test's input. Each test must run with the input its outcome was recorded on."""
    gold = _script(tmp_path / "gold", 'wc -l < "$2"')
    kept = [
        Kept(
            Probe(("count", "data/access.log"), files=(("data/access.log", text),)),
            Outcome(0, f"{n}\n", "", False, False, {}),
            "f",
        )
        for n, text in ((3, "a\nb\nc\n"), (1, "0,1,1\n"))
    ]
    files, _ = render_tests(kept, "tool", 0)
    assert (
        "'data/access.log #1'" in files["test_count.py"] and "'data/access.log #2'" in files["test_count.py"]
    )
    ran = _pytest(tmp_path / "run", files, gold)
    assert ran.returncode == 0, ran.stdout
    one = render_tests(kept[:1], "tool", 0)[0]["test_count.py"]  # one content: keyed by its name alone
    assert "FILES['data/access.log']" in one
