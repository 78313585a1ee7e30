"""Every packaged task holds solution.tar.gz, the reference submission, and it scores 1.0: csvq
here, beside the session's other users of its task (tests/conftest.py); Go and Rust in
test_solution_go_rust_docker.py, whose builds another xdist worker makes at the same time."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
import yaml

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.summary import score_task
from taskfoundry.grading.task import evaluate_task, load_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def rate(task_dir: Path, submission: Path, docker_client) -> tuple[float, str | None]:  # type: ignore[no-untyped-def]
    spec = load_task(task_dir)
    result = evaluate_task(spec, submission, EvalConfig(attempts=1), docker_client)
    expected = {b: spec.expected(b) for b in spec.branches}
    return score_task(spec.task_id, expected, result, 0.95).pass_rate, result.error_code


def reference_scores_one(task_dir: Path, docker_client, regrade: bool = True) -> None:  # type: ignore[no-untyped-def]
    """`regrade`: grade solution.tar.gz again (csvq); else read the grade the package stage gave
    that same file through the same `evaluate_task` (reports/reference.json: Go and Rust, whose
    cold compile in the grader is the cost; issue 57)."""
    solution = task_dir / "solution.tar.gz"
    with tarfile.open(solution) as tar:
        names = tar.getnames()
        compile_sh = tar.extractfile("compile.sh")
        assert compile_sh is not None and b"set -e" in compile_sh.read()
    assert "compile.sh" in names and not any(n.startswith(".git/") or n == ".git" for n in names)
    if regrade:
        assert rate(task_dir, solution, docker_client) == (1.0, None)
    else:
        assert_graded_whole_at_package_time(task_dir)


def assert_graded_whole_at_package_time(task_dir: Path) -> None:
    """The package stage's grade of the reference (reports/reference.json): every kept test passed."""
    kept = yaml.safe_load((task_dir / "task.yaml").read_text())["stats"]["tests_kept"]
    reference = json.loads((task_dir / "reports" / "reference.json").read_text())
    assert (reference["error"], reference["failed"], reference["passed"]) == (None, {}, kept) and kept > 0


@pytest.mark.parametrize("name", ["csvq"])
def test_reference_solution_scores_one(example_task, docker_client, name: str) -> None:  # type: ignore[no-untyped-def]
    reference_scores_one(example_task(name), docker_client)
