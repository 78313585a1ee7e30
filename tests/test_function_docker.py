"""The function kind end to end on examples/pyfuncs (built once, shared): accepted tasks with
full branch coverage, drops with reasons (a hang, recursion without end), grading through the
harness (reference 1.0, empty 0, malformed submissions with their error_code, a candidate
that tries to read the hidden cases), and a source with nothing that qualifies."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from taskfoundry.cli import main
from taskfoundry.evaluate.run import evaluate_run
from taskfoundry.grading.config import EvalConfig

from conftest import make_repo

pytestmark = pytest.mark.docker

ACCEPTED = ["clamp", "mean_gap", "run_length", "slugify", "to_roman", "triangle_kind", "wrap_words"]


def _tgz(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return buf.getvalue()


def _yield(out: Path) -> dict[str, object]:
    (report,) = (out / "reports").glob("*/yield.json")
    data: dict[str, object] = json.loads(report.read_text())
    return data


def test_accepted_functions_have_full_branch_coverage(function_tasks) -> None:  # type: ignore[no-untyped-def]
    out, task_dirs = function_tasks
    assert sorted(d.name.rsplit(".", 1)[-1] for d in task_dirs) == ACCEPTED
    for task_dir in task_dirs:
        task = yaml.safe_load((task_dir / "task.yaml").read_text())
        assert task["kind"] == "function" and task["branch_rate"] == 1.0 and task["dep_class"] == "SC"
        assert task["task_id"] == task_dir.name and task_dir.name.startswith("local__pyfuncs.")
        gate = json.loads((task_dir / "reports" / "gate.json").read_text())
        assert gate["mutation"]["killed"] >= 1 and all(n > 0 for n in gate["trivial_failed"].values())
        assert 1 <= len(gate["light_suite"]) < gate["cases"]
        assert "..." in (task_dir / "prompt.md").read_text()
        (branch,) = json.loads((task_dir / "tests.json").read_text())["branches"].values()
        assert 1 <= len(branch["tests"]) <= 500


def test_a_hang_and_endless_recursion_are_dropped_with_reasons(function_tasks) -> None:  # type: ignore[no-untyped-def]
    out, _ = function_tasks
    table = _yield(out)
    assert table["candidates"] == 15 and table["testable"] == 9 and table["accepted"] == 7
    dropped = table["dropped"]
    assert isinstance(dropped, dict)
    assert dropped["hang"] == 1 and dropped["recursion"] == 1 and dropped["impure"] == 2


def test_reference_scores_one_and_bad_submissions_score_zero(function_tasks, docker_client, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out, task_dirs = function_tasks
    clamp = next(d for d in task_dirs if d.name.endswith(".clamp"))
    run = tmp_path / "run"
    for task_dir in task_dirs:  # every reference
        (run / task_dir.name).mkdir(parents=True)
        shutil.copy(task_dir / "solution.tar.gz", run / task_dir.name / "submission.tar.gz")
    summary = evaluate_run(run, out / "tasks", EvalConfig(workers=2), docker_client)
    assert [s.pass_rate for s in summary.tasks] == [1.0] * len(task_dirs)
    assert all(s.resolved for s in summary.tasks)

    # one task, bad submissions: each scores 0 with a clear error_code, or fails its cases
    cheat = (
        "from pathlib import Path\nimport json\n"
        "CASES = json.loads(Path('/workspace/eval/tests/cases.json').read_text())\n"
        "def clamp(x, lo, hi):\n    return 0\n"
    )
    wrong = "def clamp(x, lo, hi):\n    return min(max(x, lo), hi)\n"  # no ValueError: some cases fail
    submissions = {
        "empty": _tgz({}),
        "not_a_tarball": b"plain text",
        "syntax": _tgz({"candidate.py": "def clamp(:\n"}),
        "cheat": _tgz({"candidate.py": cheat}),
        "wrong": _tgz({"candidate.py": wrong}),
    }
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    shutil.copytree(clamp, tasks / clamp.name)
    results, tiers = {}, {}
    for label, data in submissions.items():
        bad = tmp_path / label
        (bad / clamp.name).mkdir(parents=True)
        (bad / clamp.name / "submission.tar.gz").write_bytes(data)
        (score,) = evaluate_run(bad, tasks, EvalConfig(), docker_client).tasks
        results[label] = (score.error_code, score.pass_rate)
        tiers[label] = score.tier
    assert results["empty"] == ("missing_candidate_module", 0.0)
    assert results["not_a_tarball"] == ("bad_submission_archive", 0.0)
    assert results["syntax"] == ("candidate_syntax_error", 0.0)
    assert results["cheat"] == (None, 0.0)  # eval/ is unreadable for the candidate's uid
    assert results["wrong"][0] is None and 0.0 < results["wrong"][1] < 1.0
    assert tiers["wrong"] in ("most", "half", "some") and tiers["empty"] == "none"


def test_a_source_with_nothing_that_qualifies_gives_no_task_and_a_yield_table(
    prefect_harness, base_image, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(
        tmp_path / "plain",
        {
            "plain/__init__.py": "",
            "plain/m.py": "def f(x):\n    return x\n\ndef g(x):\n    if x:\n        print(x)\n",
        },
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", str(repo), "--out", str(out), "--kind", "function"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "0 tasks built" in result.output
    assert not (out / "tasks").exists() or not any((out / "tasks").iterdir())
    table = _yield(out)
    assert table["candidates"] == 2 and table["accepted"] == 0
    assert table["dropped"] == {"no_docstring": 2}
