"""The evaluator without Docker: grading rules, executable lookup, hash removal, scores, the run boundary."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from taskfoundry.errors import ConfigError, SandboxError, TaskfoundryError
from taskfoundry.evaluate.cli import load_eval_config
from taskfoundry.evaluate.run import evaluate_run
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.grade import grade_branch
from taskfoundry.grading.models import EvaluationResult, TestResult
from taskfoundry.grading.records import EvalStepError
from taskfoundry.grading.scripts import REMOVE_HASHED
from taskfoundry.grading.steps import Outcome
from taskfoundry.grading.summary import score_task, summarize, summary_text
from taskfoundry.grading.task import evaluate_task, load_task
from taskfoundry.grading.workspace import executable_sha256
from taskfoundry.kinds.program.kind import ProgramKind
from taskfoundry.models import (
    Branch,
    IgnoredTest,
    Images,
    TaskYaml,
    TestsJson,
    load_json_model,
    save_json,
    save_yaml,
)

A, B, C = (f"eval.tests.test_x.test_{c}" for c in "abc")


def junit(**cases: str) -> bytes:
    """A pytest-style JUnit report: test name -> passed / failure / error / skipped."""
    body = {
        "passed": "",
        "failure": '<failure message="m">t</failure>',
        "error": "<error/>",
        "skipped": "<skipped/>",
    }
    items = "".join(
        f'<testcase classname="eval.tests.test_x" name="test_{n}">{body[s]}</testcase>'
        for n, s in cases.items()
    )
    return f"<testsuites><testsuite name='pytest'>{items}</testsuite></testsuites>".encode()


def graded(rc: int, xml: bytes | None, timed_out: bool = False) -> EvaluationResult:
    result = EvaluationResult(test_branches=["k"])
    grade_branch(result, "k", [A, B, C], {A, B, C}, Outcome(rc, timed_out, "log"), xml)
    return result


def statuses(result: EvaluationResult) -> dict[str, str]:
    return {t.name: t.status for t in result.test_results}


# -- grading ---------------------------------------------------------------------------


def test_missing_tests_are_not_run() -> None:
    result = graded(1, junit(a="passed", b="failure"))
    assert statuses(result) == {A: "passed", B: "failure", C: "not_run"}
    assert result.test_results[-1].extra == {"error_code": "missing_from_junit_xml"}
    assert result.test_branch_errors == {}


def test_all_pass_report_with_failing_exit_is_not_trusted() -> None:
    result = graded(1, junit(a="passed", b="passed", c="passed"))
    assert set(statuses(result).values()) == {"not_run"}
    assert result.test_branch_errors["k"][0].error_code == "report_exit_mismatch"


def test_killed_run_with_clean_report_is_not_trusted() -> None:
    result = graded(137, junit(a="passed", b="passed"))
    assert result.test_branch_errors["k"][0].error_code == "report_exit_mismatch"
    assert "passed" not in statuses(result).values()


def test_timeout_and_missing_report_mark_the_branch() -> None:
    timed_out = graded(124, junit(a="passed"), timed_out=True)
    assert timed_out.test_branch_errors["k"][0].error_code == "tests_timeout"
    missing = graded(1, None)
    assert missing.test_branch_errors["k"][0].error_code == "no_results_xml"
    assert set(statuses(missing).values()) == {"not_run"}


def test_unreadable_report_is_a_branch_error() -> None:
    for xml in (b"PASSED PASSED", b"<testsuites><testsuite>", b"\xff\xfe<x/>"):
        result = graded(0, xml)
        assert result.test_branch_errors["k"][0].error_code == "results_xml_unreadable", xml
        assert set(statuses(result).values()) == {"not_run"}


def test_odd_exit_keeps_real_results_and_records_it() -> None:
    result = graded(2, junit(a="passed", b="error", c="skipped"))
    assert statuses(result) == {A: "passed", B: "error", C: "skipped"}
    assert result.test_branch_errors["k"][0].error_code == "run_tests_exit_2"


def test_exit_zero_with_failures_warns_and_unknown_tests_warn() -> None:
    result = EvaluationResult()
    xml = junit(a="passed", b="failure", c="passed", zzz="passed")
    grade_branch(result, "k", [A, B, C], {A, B, C}, Outcome(0, False, ""), xml)
    assert statuses(result)[B] == "failure"
    assert any("exited 0" in w for w in result.warnings)
    assert any("not in tests.json" in w for w in result.warnings)


def test_status_of_takes_the_worst_of_duplicates() -> None:
    result = EvaluationResult(
        test_results=[
            TestResult(name=A, branch="k", status="passed"),
            TestResult(name=A, branch="k", status="failure"),
        ]
    )
    assert result.status_of("k", A) == "failure" and result.status_of("k", B) == "not_run"


# -- the executable in the workspace tar ---------------------------------------------------


def workspace_tar(tmp_path: Path, entries: dict[str, bytes | str | None]) -> Path:
    """bytes: a file; str: a symlink to it; None: a directory."""
    path = tmp_path / "ws.tar"
    with tarfile.open(path, "w") as tar:
        for name, value in entries.items():
            info = tarfile.TarInfo(f"./{name}")
            if value is None:
                info.type = tarfile.DIRTYPE
            elif isinstance(value, str):
                info.type, info.linkname = tarfile.SYMTYPE, value
            else:
                info.size = len(value)
            tar.addfile(info, io.BytesIO(value) if isinstance(value, bytes) else None)
    return path


def test_executable_hash_follows_links_inside_the_workspace(tmp_path: Path) -> None:
    elf = b"\x7fELF\x02"
    want = hashlib.sha256(elf).hexdigest()
    assert executable_sha256(workspace_tar(tmp_path, {"executable": elf})) == want
    assert (
        executable_sha256(workspace_tar(tmp_path, {"bin": None, "bin/p": elf, "executable": "bin/p"})) == want
    )
    assert executable_sha256(workspace_tar(tmp_path, {"p": elf, "executable": "/workspace/p"})) == want
    script = b"#!/bin/sh\nexit 0\n"
    assert (
        executable_sha256(workspace_tar(tmp_path, {"executable": script}))
        == hashlib.sha256(script).hexdigest()
    )


@pytest.mark.parametrize(
    ("entries", "code"),
    [
        ({"compile.sh": b"#!/bin/sh\n"}, "no_executable"),
        ({"executable": None}, "executable_not_a_file"),
        ({"executable": "/usr/bin/cat"}, "executable_outside_workspace"),
        ({"executable": "../../etc/passwd"}, "executable_outside_workspace"),
        ({"executable": "executable"}, "executable_not_a_file"),
        ({"executable": "gone"}, "no_executable"),
        ({"executable": b"echo no interpreter line\n"}, "executable_not_runnable"),
        ({"executable": b""}, "executable_not_runnable"),
    ],
)
def test_executable_problems_have_codes(tmp_path: Path, entries: dict[str, Any], code: str) -> None:
    with pytest.raises(EvalStepError) as err:
        executable_sha256(workspace_tar(tmp_path, entries))
    assert err.value.error_code == code


# -- hash removal (the in-container script, run here on a temp tree) ---------------------


def test_remove_hashed_script_finds_renamed_and_oddly_named_copies(tmp_path: Path) -> None:
    gold = b"\x7fELF gold bytes"
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "deep" / "er").mkdir(parents=True)
    outside.mkdir()
    for rel in ("helper", "deep/er/a\nb", ".hidden"):
        (ws / rel).write_bytes(gold)
    (ws / "own.c").write_text("int main;")
    (outside / "copy").write_bytes(gold)
    (ws / "link").symlink_to(outside, target_is_directory=True)
    script = tmp_path / "remove.py"
    script.write_text(REMOVE_HASHED)
    proc = subprocess.run(
        [sys.executable, "-I", str(script), str(ws), hashlib.sha256(gold).hexdigest()],
        capture_output=True,
        text=True,
        check=True,
    )
    assert sorted(Path(p).name for p in json.loads(proc.stdout)["removed"]) == [".hidden", "a\nb", "helper"]
    assert sorted(p.name for p in ws.rglob("*") if p.is_file() and not p.is_symlink()) == ["own.c"]
    assert (outside / "copy").exists()  # links are not followed out of the workspace


# -- scores, models, config -----------------------------------------------------------------


def test_pass_rate_counts_only_non_ignored_tests() -> None:
    result = graded(1, junit(a="passed", b="passed", c="failure"))
    score = score_task("t", {"k": [A, B]}, result, 0.95)  # C is ignored
    assert (score.tests, score.passed, score.pass_rate, score.resolved) == (2, 2, 1.0, True)
    near = score_task("t", {"k": [A, B, C]}, result, 0.6)
    assert near.near_resolved and not near.resolved and near.pass_rate == pytest.approx(2 / 3, abs=1e-5)
    assert not score_task("t", {}, result, 0.95).resolved


def test_summary_means_and_text(tmp_path: Path) -> None:
    ok = score_task("a", {"k": [A]}, graded(0, junit(a="passed")), 0.95)
    bad = score_task("b", {"k": [A]}, EvaluationResult(error_code="sandbox_error"), 0.95)
    summary = summarize(tmp_path, tmp_path, [ok, bad], ["w"])
    assert (summary.mean_pass_rate, summary.resolved_rate, summary.near_resolved_rate) == (0.5, 0.5, 0.5)
    assert bad.infra_error
    text = summary_text(summary)
    assert "re-run" in text and "mean pass rate 50.0%" in text and "warning: w" in text


def test_eval_json_round_trip(tmp_path: Path) -> None:
    result = graded(1, junit(a="passed", b="failure"))
    result.executable_hash = "0" * 64
    save_json(tmp_path / "x.eval.json", result)
    assert load_json_model(tmp_path / "x.eval.json", EvaluationResult) == result


def test_eval_config_layers(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("namespace: other\neval: {compile_timeout: 60, workers: 3}\n")
    config = load_eval_config(cfg, {"workers": 5, "compile_timeout": None})
    assert (config.compile_timeout, config.workers) == (60, 5)
    cfg.write_text("eval: {compile_timout: 60}\n")
    with pytest.raises(ConfigError):
        load_eval_config(cfg, {})


# -- the per-task boundary (no container is started in these) -----------------------------


def make_task(tasks: Path, task_id: str = "o__r.aaaaaaa") -> Path:
    task_dir = tasks / task_id
    save_yaml(
        task_dir / "task.yaml",
        TaskYaml(
            repository="o/r",
            commit="a" * 40,
            language="c",
            difficulty="easy",
            eval_clean_hashes=["b" * 64],
            task_id=task_id,
            difficulty_score=1.0,
            source="/x",
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            executable="r",
            images=Images(task="ns/x:task", task_cleanroom="ns/x:task_cleanroom"),
        ),
    )
    branches = {
        "k": Branch(tests=[A, B], ignored_tests=[IgnoredTest(name=C, reasons=[])]),
        "dead": Branch(ignored=True, tests=[C]),
    }
    save_json(task_dir / "tests.json", TestsJson(branches=branches))
    return task_dir


def test_missing_submission_is_an_error_record(tmp_path: Path) -> None:
    spec = load_task(make_task(tmp_path / "tasks"))
    result = evaluate_task(spec, tmp_path / "none.tar.gz", EvalConfig(), client=None)  # type: ignore[arg-type]
    assert result.error_code == "missing_submission" and result.test_branches == ["k"]
    assert {(t.name, t.status) for t in result.test_results} == {(A, "not_run"), (B, "not_run")}


def test_run_records_every_kind_of_bad_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks, run = tmp_path / "tasks", tmp_path / "run"
    make_task(tasks, "a__infra.0000000")
    make_task(tasks, "b__bug.0000000")
    (tasks / "c__broken.0000000").mkdir()
    (tasks / "c__broken.0000000" / "task.yaml").write_text("{")
    (tasks / "c__broken.0000000" / "tests.json").write_text("{}")
    (run / "zz__unknown.0000000").mkdir(parents=True)
    (run / "zz__unknown.0000000" / "submission.tar.gz").write_bytes(b"")
    (run / "a__infra.0000000").mkdir()  # a run with no submission for any task is refused
    (run / "a__infra.0000000" / "submission.tar.gz").write_bytes(b"")
    calls: list[str] = []

    def fake(self: Any, task_dir: Path, *args: Any) -> EvaluationResult:
        calls.append(task_dir.name)
        if task_dir.name.startswith("a"):
            raise SandboxError("daemon went away")
        raise RuntimeError("a bug")

    monkeypatch.setattr(ProgramKind, "grade", fake)
    summary = evaluate_run(run, tasks, EvalConfig(attempts=2, workers=2), client=object())  # type: ignore[arg-type]
    codes = {t.task_id: (t.error_code, t.infra_error) for t in summary.tasks}
    assert codes == {
        "a__infra.0000000": ("sandbox_error", True),
        "b__bug.0000000": ("internal_error", True),
        "c__broken.0000000": ("task_load_error", False),
    }
    assert calls.count("a__infra.0000000") == 2 and calls.count("b__bug.0000000") == 1
    for task_id in codes:
        saved = load_json_model(run / task_id / f"{task_id}.eval.json", EvaluationResult)
        assert saved.error_code == codes[task_id][0]
    assert (run / "summary.json").exists() and summary.warnings == [
        "submission for unknown task zz__unknown.0000000"
    ]


def test_run_needs_its_directories(tmp_path: Path) -> None:
    with pytest.raises(TaskfoundryError):
        evaluate_run(tmp_path / "run", tmp_path / "nope", EvalConfig(), client=object())  # type: ignore[arg-type]


class _NoImages:
    """A Docker client stand-in whose engine holds no image (nothing may be pulled)."""

    class images:  # mirrors docker.DockerClient.images
        @staticmethod
        def get(tag: str) -> None:
            from docker.errors import ImageNotFound

            raise ImageNotFound(f"no such image: {tag}")


def test_missing_task_image_is_a_task_error_not_a_pull(tmp_path: Path) -> None:
    tasks, run = tmp_path / "tasks", tmp_path / "run"
    task_id = make_task(tasks).name
    (run / task_id).mkdir(parents=True)
    (run / task_id / "submission.tar.gz").write_bytes(b"\x1f\x8b")
    summary = evaluate_run(run, tasks, EvalConfig(), client=_NoImages())  # type: ignore[arg-type]
    assert [(t.error_code, t.infra_error) for t in summary.tasks] == [("task_image_missing", False)]


def test_task_id_must_name_its_directory(tmp_path: Path) -> None:
    task_dir = make_task(tmp_path / "tasks")
    moved = task_dir.rename(tmp_path / "tasks" / "other")
    with pytest.raises(ConfigError, match="task_id"):
        load_task(moved)


class _RecordingKind:
    """A kind that grades every submission as resolved and records what it was asked."""

    name = "recording"
    seen: list[tuple[str, str]] = []

    def grade(
        self, task_dir: Path, submission: Path, config: EvalConfig, client: Any, branch: str
    ) -> EvaluationResult:
        self.seen.append((task_dir.name, branch))
        return EvaluationResult(task_id=task_dir.name, solution_branch=branch)


def test_the_task_kind_grades_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from taskfoundry.kinds import registry

    tasks, run = tmp_path / "tasks", tmp_path / "run"
    task_dir = make_task(tasks)
    text = (task_dir / "task.yaml").read_text().replace("kind: program", "kind: recording")
    (task_dir / "task.yaml").write_text(text if "kind: recording" in text else text + "kind: recording\n")
    (run / task_dir.name).mkdir(parents=True)
    (run / task_dir.name / "submission.tar.gz").write_bytes(b"\x1f\x8b")
    monkeypatch.setitem(registry.KINDS, "recording", f"{__name__}:_RecordingKind")
    # Other tests in this worker (the evaluate flow's) grade through the same class.
    monkeypatch.setattr(_RecordingKind, "seen", [])
    summary = evaluate_run(run, tasks, EvalConfig(), client=object())  # type: ignore[arg-type]
    assert _RecordingKind.seen == [(task_dir.name, "run")]
    assert [t.error_code for t in summary.tasks] == [None]


def test_a_wrong_tasks_directory_or_an_empty_run_is_an_error_not_a_summary_of_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`eval RUN --tasks WRONG_DIR` exited 0 and wrote `"tasks": []` over RUN's summary (issue 59)."""
    from click.testing import CliRunner

    from taskfoundry.cli import main
    from taskfoundry.kinds import registry

    tasks, run = tmp_path / "tasks", tmp_path / "run"
    task_dir = make_task(tasks)
    text = (task_dir / "task.yaml").read_text().replace("kind: program", "kind: recording")
    (task_dir / "task.yaml").write_text(text if "kind: recording" in text else text + "kind: recording\n")
    monkeypatch.setitem(registry.KINDS, "recording", f"{__name__}:_RecordingKind")
    (run / task_dir.name).mkdir(parents=True)
    with pytest.raises(TaskfoundryError, match="no submission in .* for any of the 1 tasks"):
        evaluate_run(run, tasks, EvalConfig(), client=object())  # type: ignore[arg-type]
    (run / task_dir.name / "submission.tar.gz").write_bytes(b"\x1f\x8b")
    first = evaluate_run(run, tasks, EvalConfig(), client=object())  # type: ignore[arg-type]
    assert [t.task_id for t in first.tasks] == [task_dir.name]
    before = (run / "summary.json").read_text()
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    graded = CliRunner().invoke(main, ["eval", str(run), "--tasks", str(wrong)])
    assert graded.exit_code == 1 and f"no task in {wrong}" in graded.output
    assert (run / "summary.json").read_text() == before  # the real summary is still there
    other = make_task(tmp_path / "other", "b__other.0000000")  # a directory holding another task
    (run / other.name).mkdir()
    (run / other.name / "submission.tar.gz").write_bytes(b"\x1f\x8b")
    text = (other / "task.yaml").read_text().replace("kind: program", "kind: recording")
    (other / "task.yaml").write_text(text if "kind: recording" in text else text + "kind: recording\n")
    with pytest.raises(TaskfoundryError, match="holds 1 graded tasks this run did not find"):
        evaluate_run(run, other.parent, EvalConfig(), client=object())  # type: ignore[arg-type]
    assert (run / "summary.json").read_text() == before  # never replaced by less
