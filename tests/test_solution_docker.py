"""Every packaged task holds solution.tar.gz, the reference submission, and it scores 1.0."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from taskfoundry.evaluate import EvalConfig, evaluate_task, load_task
from taskfoundry.evaluate.summary import score_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _rate(task_dir: Path, submission: Path, docker_client) -> tuple[float, str | None]:  # type: ignore[no-untyped-def]
    spec = load_task(task_dir)
    result = evaluate_task(spec, submission, EvalConfig(attempts=1), docker_client)
    expected = {b: spec.expected(b) for b in spec.branches}
    return score_task(spec.task_id, expected, result, 0.95).pass_rate, result.error_code


@pytest.mark.parametrize("name", ["csvq", "logsum", "rcalc"])
def test_reference_solution_scores_one(example_task, docker_client, name: str) -> None:  # type: ignore[no-untyped-def]
    task_dir = example_task(name)
    solution = task_dir / "solution.tar.gz"
    with tarfile.open(solution) as tar:
        names = tar.getnames()
        compile_sh = tar.extractfile("compile.sh")
        assert compile_sh is not None and b"set -e" in compile_sh.read()
    assert "compile.sh" in names and not any(n.startswith(".git/") or n == ".git" for n in names)
    rate, error = _rate(task_dir, solution, docker_client)
    assert (rate, error) == (1.0, None)


def test_do_nothing_submission_scores_zero(example_task, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "submission.tar.gz"
    script = b"#!/bin/sh\nprintf '#!/bin/sh\\nexit 0\\n' > executable && chmod +x executable\n"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("compile.sh")
        info.size, info.mode = len(script), 0o755
        tar.addfile(info, io.BytesIO(script))
    rate, error = _rate(example_task("rcalc"), path, docker_client)
    assert (rate, error) == (0.0, None)
