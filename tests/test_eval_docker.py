"""The evaluator on a real csvq task: gold scores 100%, dummies 0%, hostile submissions never pass.

One task build (csvq) for the whole module; each case is one submission graded against it.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry.evaluate.cli import eval_command
from taskfoundry.grading import scripts
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.grading.sandbox import LABEL, GradingSandbox
from taskfoundry.grading.scripts import PYTEST_STEERING
from taskfoundry.grading.summary import score_task
from taskfoundry.grading.task import TaskSpec, evaluate_task, load_task
from taskfoundry.kinds.program.filter.dummies import DUMMY_NAMES, render_dummy
from taskfoundry.models import TestsJson, save_json
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

from conftest import EXAMPLES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# small caps: every hostile case meets its limit in seconds
SMALL = EvalConfig(
    compile_timeout=15,
    test_timeout=300,
    workspace_mb=64,
    tmp_mb=64,
    home_mb=32,
    memory_mb=1024,
    pids=256,
    attempts=1,
    pytest_workers=1,
)
FAIL_EXE = "printf '#!/bin/sh\\nexit 1\\n' > executable && chmod +x executable"


@pytest.fixture(scope="module")
def spec(example_task) -> TaskSpec:  # type: ignore[no-untyped-def]
    return load_task(example_task("csvq"))


@pytest.fixture(scope="module")
def mini(spec: TaskSpec, tmp_path_factory) -> TaskSpec:  # type: ignore[no-untyped-def]
    """The same task with its smallest test modules (8+ tests): hostile cases need failing
    tests, not all of them."""
    counts = Counter(n.split(".")[2] for b in spec.branches for n in spec.expected(b))
    modules: list[str] = []
    for module in sorted(counts, key=lambda m: (counts[m], m)):
        if sum(counts[m] for m in modules) >= 8:
            break
        modules.append(module)
    task = load_task(cut_task(spec, tmp_path_factory.mktemp("mini") / spec.task_id, tuple(modules)))
    assert sum(len(task.expected(b)) for b in task.branches) >= 8
    return task


def cut_task(spec: TaskSpec, dest: Path, modules: tuple[str, ...]) -> Path:
    shutil.copytree(spec.task_dir, dest)
    keep = ("eval/run.sh", "eval/tests", "eval/tests/tfrun.py", *(f"eval/tests/{m}.py" for m in modules))
    tests = TestsJson.model_validate_json((dest / "tests.json").read_text())
    for key, branch in tests.branches.items():
        branch.tests = [n for n in branch.tests if n.split(".")[2] in modules]
        tarball = dest / "tests" / f"{key}.tar.gz"
        with tarfile.open(spec.suite(key)) as src, tarfile.open(tarball, "w:gz") as out:
            for member in src.getmembers():
                if member.name in keep or member.isdir():
                    out.addfile(member, src.extractfile(member) if member.isfile() else None)
    save_json(dest / "tests.json", tests)
    return dest


@pytest.fixture(scope="module")
def gold_bytes(spec: TaskSpec, docker_client) -> bytes:  # type: ignore[no-untyped-def]
    with DockerSandbox(spec.task.images.task, SandboxLimits(), client=docker_client) as box:
        return box.get_file("/task/gold/executable")


@pytest.fixture(autouse=True)
def no_leftovers(docker_client, monkeypatch) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Every case removes its containers and volumes, whatever the submission did.

    Only what this test made is checked (recorded as the sandboxes make it), so another
    run on the same engine cannot fail this one's teardown.
    """
    made: dict[str, list[str]] = {"containers": [], "volumes": []}
    enter, volume = GradingSandbox.__enter__, GradingSandbox._volume

    def recording_enter(self: GradingSandbox) -> GradingSandbox:
        box = enter(self)
        assert box._container is not None
        made["containers"].append(box._container.id)
        return box

    def recording_volume(self: GradingSandbox, options: str) -> str:
        name = volume(self, options)
        made["volumes"].append(name)
        return name

    monkeypatch.setattr(GradingSandbox, "__enter__", recording_enter)
    monkeypatch.setattr(GradingSandbox, "_volume", recording_volume)
    yield
    filters = {"label": [f"{k}={v}" for k, v in LABEL.items()]}
    # sparse: no inspect of each container, which another test's removal would turn into a 404
    left = {c.id for c in docker_client.containers.list(all=True, filters=filters, sparse=True)}
    assert left.isdisjoint(made["containers"])
    assert {v.name for v in docker_client.volumes.list(filters=filters)}.isdisjoint(made["volumes"])


def submission(tmp_path: Path, files: dict[str, bytes | str], modes: dict[str, int] | None = None) -> Path:
    """A submission tarball: path -> content (compile.sh and executable-looking files are 0755)."""
    path = tmp_path / "submission.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = (modes or {}).get(name, 0o755 if name.endswith(".sh") else 0o644)
            tar.addfile(info, io.BytesIO(data))
    return path


def compile_sh(body: str) -> dict[str, bytes | str]:
    return {"compile.sh": "#!/bin/sh\n" + body + "\n"}


def grade(spec: TaskSpec, docker_client, path: Path, config: EvalConfig = SMALL) -> EvaluationResult:  # type: ignore[no-untyped-def]
    return evaluate_task(spec, path, config, docker_client)


def rate(spec: TaskSpec, result: EvaluationResult) -> float:
    expected = {b: spec.expected(b) for b in spec.branches}
    return score_task(spec.task_id, expected, result, 0.95).pass_rate


def compile_output(result: EvaluationResult) -> str:
    return next(s.output for s in result.log if s.step == "compile")


def assert_never_passes(spec: TaskSpec, result: EvaluationResult) -> None:
    assert rate(spec, result) == 0.0
    assert not any(t.status == "passed" for t in result.test_results if t.name in spec.expected(t.branch))


# -- the two anchors ------------------------------------------------------------------


def gold_submission(spec: TaskSpec, tmp_path: Path) -> Path:
    src = EXAMPLES / "csvq"
    files: dict[str, bytes | str] = {
        p.relative_to(src).as_posix(): p.read_bytes() for p in sorted(src.rglob("*")) if p.is_file()
    }
    files["compile.sh"] = (spec.task_dir / "build.sh").read_text()
    return submission(tmp_path, files)


def test_gold_source_scores_100_percent(spec: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = grade(spec, docker_client, gold_submission(spec, tmp_path), EvalConfig(attempts=1))
    assert result.error_code is None, result.error_details
    assert result.test_branch_errors == {}
    assert rate(spec, result) == 1.0
    assert result.executable_hash and len(result.executable_hash) == 64
    steps = [s.step for s in result.log]
    assert steps[:4] == ["copy_submission", "extract_submission", "remove_hashed_files", "find_compile_sh"]
    assert "run_tests" in steps and "results_read" in steps


@pytest.mark.parametrize("dummy", DUMMY_NAMES)
def test_dummy_scores_zero_on_the_kept_suite(
    spec: TaskSpec,
    docker_client,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    dummy: str,
) -> None:
    with DockerSandbox(spec.task.images.task_cleanroom, SandboxLimits(), client=docker_client) as box:
        usage = box.get_file("/workspace/docs/usage/csvq.txt").decode()
    script = render_dummy(dummy, usage).decode()
    body = f"cat > executable <<'TF_DUMMY_EOF'\n{script}TF_DUMMY_EOF\nchmod +x executable"
    result = grade(spec, docker_client, submission(tmp_path, compile_sh(body)))
    assert result.error_code is None, result.error_details
    assert_never_passes(spec, result)


# -- hostile submissions --------------------------------------------------------------


def test_missing_compile_sh(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = grade(mini, docker_client, submission(tmp_path, {"main.c": "int main(void){return 0;}\n"}))
    assert result.error_code == "missing_compile_sh"
    assert {t.status for t in result.test_results} == {"not_run"}
    assert_never_passes(mini, result)


def test_compile_cannot_reach_the_network(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = (
        "cat /proc/net/dev\n"
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)\" "
        "&& { echo NETWORK-REACHED; " + FAIL_EXE + "; exit 0; }\n"
        "echo no-network; exit 3"
    )
    result = grade(mini, docker_client, submission(tmp_path, compile_sh(body)))
    assert result.error_code == "compile_failed" and "exit 3" in (result.error_details or "")
    out = compile_output(result)
    assert "no-network" in out and "NETWORK-REACHED" not in out and "eth0" not in out


def test_fork_bomb_in_compile(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = "bomb() { bomb | bomb & }\nbomb\nsleep 600\n" + FAIL_EXE
    result = grade(
        mini,
        docker_client,
        submission(tmp_path, compile_sh(body)),
        SMALL.model_copy(update={"compile_timeout": 5}),
    )
    assert result.error_code in ("compile_timeout", "compile_failed")
    assert_never_passes(mini, result)


def test_disk_filler_meets_the_tmpfs_caps(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = (
        'for d in . /tmp "$HOME" /var/tmp /; do dd if=/dev/zero of="$d/fill" bs=1M count=4096 '
        "2>&1; done\n" + FAIL_EXE + "\nexit 0"
    )
    result = grade(mini, docker_client, submission(tmp_path, compile_sh(body)))
    out = compile_output(result)
    assert out.count("No space left on device") >= 4 and "Read-only file system" in out
    # the disk is full: printf leaves no file, or an empty one (neither ELF nor #!)
    assert result.error_code in ("no_executable", "executable_not_runnable", None)
    assert_never_passes(mini, result)


def test_search_for_hidden_tests_finds_nothing(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = (
        "find / -xdev \\( -name 'test_*.py' -o -name tests.json -o -name 'results.xml' "
        "-o -path '*/eval/*' -o -name '*.tar.gz' \\) -not -path '/usr/*' 2>/dev/null > found.txt\n"
        "ls -d /task /src /cov 2>> found.txt\n"
        'echo "FOUND: $(grep -c . found.txt) $(cat found.txt)"\n'
        "{ echo '#!/bin/sh'; echo 'cat \"$(dirname \"$0\")/found.txt\"'; } > executable\n"
        "chmod +x executable"
    )
    result = grade(mini, docker_client, submission(tmp_path, compile_sh(body)))
    out = compile_output(result)
    assert "test_" not in out.split("FOUND:")[1] and "tests.json" not in out
    assert result.error_code is None
    assert_never_passes(mini, result)


def test_renamed_gold_copies_are_removed_by_hash(
    mini: TaskSpec,
    docker_client,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    gold_bytes: bytes,
) -> None:
    files: dict[str, bytes | str] = {".tools/helper": gold_bytes, "bin/a\nb": gold_bytes}
    files.update(compile_sh("cp .tools/helper executable || { " + FAIL_EXE + "; }"))
    result = grade(mini, docker_client, submission(tmp_path, files, {".tools/helper": 0o755}))
    assert any("removed 2 file(s)" in w for w in result.warnings), result.warnings
    assert result.error_code is None and result.executable_hash not in mini.task.eval_clean_hashes
    assert_never_passes(mini, result)


def test_gold_rebuilt_from_pieces_is_refused(
    mini: TaskSpec,
    docker_client,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    gold_bytes: bytes,
) -> None:
    half = len(gold_bytes) // 2
    files: dict[str, bytes | str] = {"p1": gold_bytes[:half], "p2": gold_bytes[half:]}
    files.update(compile_sh("cat p1 p2 > executable && chmod +x executable"))
    result = grade(mini, docker_client, submission(tmp_path, files))
    assert result.error_code == "gold_executable"
    assert_never_passes(mini, result)


def test_printing_passed_lines_fakes_nothing(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    names = "\n".join(f"{n.replace('.', '/', 2)} PASSED" for n in mini.expected(mini.branches[0]))
    fake = f"#!/bin/sh\ncat <<'EOF'\n{names}\n== {len(names)} passed in 0.01s ==\nEOF\nexit 0\n"
    files: dict[str, bytes | str] = {"fake.sh": fake, **compile_sh("cp fake.sh executable")}
    result = grade(mini, docker_client, submission(tmp_path, files))
    assert result.error_code is None
    assert_never_passes(mini, result)


def test_forged_junit_report_is_not_trusted(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    branch = mini.branches[0]
    cases = "".join(
        f'<testcase classname="{n.rsplit(".", 1)[0]}" name="{n.rsplit(".", 1)[1]}"/>'
        for n in mini.expected(branch)
    )
    xml = f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>'
    forger = (
        "#!/bin/sh\nW=/workspace/eval/results.xml\n"
        f"cat > /tmp/forged.xml <<'EOF'\n{xml}\nEOF\n"
        "mkdir /tmp/forger.lock 2>/dev/null && ( setsid sh -c "
        '\'while :; do cp /tmp/forged.xml "$0"; sleep 0.05; done\' "$W" >/dev/null 2>&1 & )\n'
        "exit 0\n"
    )
    files: dict[str, bytes | str] = {"forger.sh": forger, **compile_sh("cp forger.sh executable")}
    result = grade(mini, docker_client, submission(tmp_path, files))
    assert_never_passes(mini, result)


def test_pytest_shadowing_files_are_ignored(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shadow = "import sys\nopen('eval/results.xml', 'w').write('<testsuites/>')\nsys.exit(0)\n"
    conftest = (
        "import pytest\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    out = yield\n"
        "    out.get_result().outcome = 'passed'\n"
    )
    files: dict[str, bytes | str] = {
        "pytest.py": shadow,
        "conftest.py": conftest,
        "pytest.ini": "[pytest]\naddopts = -p no:junitxml\n",
        "eval/run.sh": "echo hijacked; exit 0\n",
    }
    files.update(compile_sh(FAIL_EXE))
    result = grade(mini, docker_client, submission(tmp_path, files))
    assert result.error_code is None
    assert_never_passes(mini, result)
    assert any(t.status == "failure" for t in result.test_results)


# the grader's pytest imports a package `__init__.py` at its rootdir (the workspace) while it
# collects (dirsearch's own tree has one: its reference graded 0.0); code there runs as the
# grader, before any test, and can mark every report passed
FORGING_INIT = (
    "from _pytest.reports import TestReport\n"
    "_made = TestReport.from_item_and_call.__func__\n"
    "def _passed(cls, item, call):\n"
    "    rep = _made(cls, item, call)\n"
    "    rep.outcome, rep.longrepr = 'passed', None\n"
    "    return rep\n"
    "TestReport.from_item_and_call = classmethod(_passed)\n"
)


@pytest.mark.parametrize("defence", ["on", "off"])
def test_a_package_init_at_the_workspace_root_does_not_run_in_the_grader(
    mini: TaskSpec, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, defence: str
) -> None:  # type: ignore[no-untyped-def]
    if defence == "off":
        monkeypatch.setattr(
            scripts, "PYTEST_STEERING", tuple(n for n in PYTEST_STEERING if n != "__init__.py")
        )
    files: dict[str, bytes | str] = {"__init__.py": FORGING_INIT, **compile_sh(FAIL_EXE)}
    result = grade(mini, docker_client, submission(tmp_path, files))
    if defence == "on":
        assert result.error_code is None
        assert_never_passes(mini, result)
    else:  # the attack is real: without the scrub every test of the failing program passes
        assert rate(mini, result) == 1.0


# -- the command ----------------------------------------------------------------------


def test_eval_command_survives_a_bad_task(mini: TaskSpec, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(mini.task_dir, tasks / mini.task_id)
    (tasks / "broken__task.0000000").mkdir()
    (tasks / "broken__task.0000000" / "task.yaml").write_text("repository: [unclosed\n")
    (tasks / "broken__task.0000000" / "tests.json").write_text("{}")
    run = tmp_path / "run"
    (run / mini.task_id).mkdir(parents=True)
    shutil.copy(gold_submission(mini, tmp_path), run / mini.task_id / "submission.tar.gz")
    res = CliRunner().invoke(eval_command, [str(run), "--tasks", str(tasks), "--workers", "2"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    summary = json.loads((run / "summary.json").read_text())
    by_id = {t["task_id"]: t for t in summary["tasks"]}
    assert by_id[mini.task_id]["resolved"] and by_id[mini.task_id]["pass_rate"] == 1.0
    assert by_id["broken__task.0000000"]["error_code"] == "task_load_error"
    assert summary["mean_pass_rate"] == 0.5 and summary["resolved_rate"] == 0.5
    saved = EvaluationResult.model_validate_json(
        (run / mini.task_id / f"{mini.task_id}.eval.json").read_text()
    )
    assert saved.error_code is None and saved.test_branches == mini.branches
    assert "mean pass rate 50.0%" in res.output


# -- a program that attacks the grader (isolation: pytest as root, the program as its own uid)

# Answers from the hidden tests themselves: the test whose run([...]) argv equals its own,
# then the stdout, stderr and exit status that test asserts. `ROOTS` are where it looks.
LOOKUP = r"""#!/usr/bin/env python3
import ast, glob, os, sys
def roots():
    yield "/workspace/eval/tests"
    for pid in os.listdir("/proc"):  # pytest's cwd through procfs, if it may be read
        if pid.isdigit():
            yield f"/proc/{pid}/cwd/eval/tests"
def answer(path):
    try:
        tree = ast.parse(open(path).read())
    except (OSError, SyntaxError):
        return
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "run"]
        try:
            if not calls or ast.literal_eval(calls[0].args[0]) != sys.argv[1:]:
                continue
        except ValueError:
            continue
        want = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute):
                try:
                    want[node.left.attr] = ast.literal_eval(node.comparators[0])
                except ValueError:
                    pass
        sys.stdout.write(want.get("stdout", ""))
        sys.stderr.write(want.get("stderr", ""))
        sys.exit(want.get("returncode", 0))
for root in roots():
    for path in glob.glob(root + "/test_*.py"):
        answer(path)
sys.exit(1)
"""


def script_submission(tmp_path: Path, script: str) -> Path:
    files: dict[str, bytes | str] = {"prog.py": script, **compile_sh("cp prog.py executable")}
    return submission(tmp_path, files)


def test_argv_lookup_in_the_hidden_tests_scores_nothing(
    mini: TaskSpec, docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    path = script_submission(tmp_path, LOOKUP)
    open_grader = grade(mini, docker_client, path, SMALL.model_copy(update={"isolate": False}))
    assert rate(mini, open_grader) >= 0.5  # the attack is real where the tests can be read
    result = grade(mini, docker_client, path)
    assert result.error_code is None and result.test_branch_errors == {}
    assert_never_passes(mini, result)


def test_procfs_of_pytest_gives_nothing(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """environ, cmdline and fd of every pytest process; the lookup above through /proc/<pid>/cwd."""
    probe = LOOKUP.replace(
        "for root in roots():",
        "import pathlib\n"
        'for pid in [p for p in os.listdir("/proc") if p.isdigit()]:\n'
        '    for part in ("environ", "cmdline", "fd", "cwd", "root"):\n'
        '        target = pathlib.Path(f"/proc/{pid}/{part}")\n'
        "        try:\n"
        '            found = os.listdir(target) if part in ("fd", "cwd", "root") else target.read_bytes()\n'
        "        except OSError:\n"
        "            continue\n"
        '        if b"TF_PROGRAM_UID" in (found if isinstance(found, bytes) else b""):\n'
        "            sys.exit(7)  # the grader's environment was readable\n"
        "for root in roots():",
    )
    open_grader = grade(
        mini, docker_client, script_submission(tmp_path, probe), SMALL.model_copy(update={"isolate": False})
    )
    assert rate(mini, open_grader) >= 0.5  # same uid: /proc/<pytest>/cwd leads to the tests
    result = grade(mini, docker_client, script_submission(tmp_path, probe))
    assert result.error_code is None and result.test_branch_errors == {}
    assert_never_passes(mini, result)
    assert not any("exit status 7" in str(t.extra) or "== 7" in str(t.extra) for t in result.test_results)


def test_background_report_forger_keeping_one_failure_is_gone(
    mini: TaskSpec, docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """A forged report that keeps one failure passes the exit-code check; it must never be written."""
    branch = mini.branches[0]
    names = mini.expected(branch)
    cases = "".join(
        f'<testcase classname="{n.rsplit(".", 1)[0]}" name="{n.rsplit(".", 1)[1]}">'
        + ("<failure message='x'/>" if i == 0 else "")
        + "</testcase>"
        for i, n in enumerate(names)
    )
    xml = f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>'
    forger = (
        "#!/bin/sh\n"
        f"cat > /tmp/forged.xml <<'EOF'\n{xml}\nEOF\n"
        "( setsid sh -c 'while :; do cp /tmp/forged.xml /workspace/eval/results.xml; "
        "cp /tmp/forged.xml /workspace/results.xml; sleep 0.02; done' >/dev/null 2>&1 & )\n"
        "exit 1\n"
    )
    files: dict[str, bytes | str] = {"forger.sh": forger, **compile_sh("cp forger.sh executable")}
    result = grade(mini, docker_client, submission(tmp_path, files))
    assert result.error_code is None and result.test_branch_errors == {}
    assert_never_passes(mini, result)
    read = next(s for s in result.log if s.step == "results_read")
    assert "<failure message='x'/>" not in read.output


def test_helper_conftest_and_plugin_edits_while_tests_run_fail(
    mini: TaskSpec, docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    plugin = (
        "import pytest\\n@pytest.hookimpl(tryfirst=True)\\n"
        "def pytest_runtest_call(item):\\n    return True\\n"
    )
    body = (
        "#!/bin/sh\n"
        "for f in /workspace/eval/tests/tfrun.py /workspace/eval/tests/conftest.py /workspace/conftest.py "
        "/workspace/eval/conftest.py /workspace/pytest.ini /workspace/eval/run.sh; do\n"
        f'  printf "{plugin}" > "$f" 2>/dev/null && echo "WROTE $f" >&2\n'
        "done\n"
        "mv /workspace/eval /workspace/eval.old 2>/dev/null && echo MOVED >&2\n"
        "exit 1\n"
    )
    files: dict[str, bytes | str] = {"edit.sh": body, **compile_sh("cp edit.sh executable")}
    result = grade(mini, docker_client, submission(tmp_path, files))
    assert result.error_code is None and result.test_branch_errors == {}
    assert_never_passes(mini, result)
    stderr = " ".join(str(t.extra) for t in result.test_results)
    assert "WROTE" not in stderr and "MOVED" not in stderr


def test_writing_into_other_tests_directories_fails(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = (
        "#!/bin/sh\n"
        "for d in /tmp/pytest-of-*/pytest-*/* /tmp/pytest-of-*/*/* /tmp/*/; do\n"
        '  [ "$d" = "$PWD" ] && continue\n'
        '  echo planted > "$d/out.csv" 2>/dev/null && echo "PLANTED $d" >&2\n'
        "done\n"
        "exit 1\n"
    )
    files: dict[str, bytes | str] = {"plant.sh": body, **compile_sh("cp plant.sh executable")}
    result = grade(mini, docker_client, submission(tmp_path, files))
    assert result.error_code is None and result.test_branch_errors == {}
    assert_never_passes(mini, result)
    assert "PLANTED" not in " ".join(str(t.extra) for t in result.test_results)


def test_killing_or_tracing_pytest_fails(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tracer = r"""#!/usr/bin/env python3
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if pid == os.getpid():
        continue
    if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
        sys.stderr.write(f"TRACED {pid}\n")
    try:
        os.kill(pid, signal.SIGKILL)
        sys.stderr.write(f"KILLED {pid}\n")
    except OSError:
        pass
sys.exit(1)
"""
    result = grade(mini, docker_client, script_submission(tmp_path, tracer))
    assert result.error_code is None and result.test_branch_errors == {}  # pytest lived to report
    assert_never_passes(mini, result)
    assert {t.status for t in result.test_results} == {"failure"}
    text = " ".join(str(t.extra) for t in result.test_results)
    assert "TRACED" not in text and "KILLED" not in text
