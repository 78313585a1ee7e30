"""build-many and refresh refresh the `catalog` artifact: a row per task of their OUT folder."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from taskfoundry.cli import main
from taskfoundry.config import Config
from taskfoundry.flows.artifacts import read_artifacts
from taskfoundry.pipeline.source import source_stage

from catalog_support import sample_out, write_task
from conftest import make_repo


def _catalog_rows() -> tuple[list[dict[str, str]], str]:
    artifact = read_artifacts(["catalog"])[0]  # the newest version of the key
    rows = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    return rows, artifact.description or ""


def test_build_many_publishes_the_catalog_of_its_out_folder(tmp_path: Path, prefect_harness: None) -> None:
    out = sample_out(tmp_path / "out")
    (tmp_path / "plain").mkdir()  # a source that fails: the catalog is published all the same
    result = CliRunner().invoke(
        main, ["build-many", str(tmp_path / "plain"), "--out", str(out), "--no-progress"]
    )
    assert result.exit_code == 1, result.output
    rows, description = _catalog_rows()
    assert [r["task"] for r in rows] == sorted(p.name for p in (out / "tasks").iterdir())
    gamma = next(r for r in rows if r["task"] == "acme__gamma.ccccccc")
    assert gamma == {
        "task": "acme__gamma.ccccccc",
        "kind": "function",
        "language": "go",
        "difficulty": "hard",
        "tests": "3",
        "recall": "0",
        "coverage": "50.0%",
        "mutation score": "75.0%",
        "gold": "n/a",
        "grade": "n/a",
    }
    assert str(out.resolve()) in description and "5 tasks, 17 tests" in description


def test_refresh_publishes_the_catalog_with_the_skipped_task(tmp_path: Path, prefect_harness: None) -> None:
    repo = make_repo(tmp_path / "built", {"a.c": "int main(void) { return 0; }\n"})
    out = tmp_path / "out"
    config = Config(out=out)
    src = source_stage(str(repo), config.sources, config.work_dir)
    write_task(out / "tasks", src.task_id, commit=src.commit, language="c", extra={"kind": "program"})
    (tmp_path / "cat.yaml").write_text("- built\n")
    result = CliRunner().invoke(
        main, ["refresh", "--catalog", str(tmp_path / "cat.yaml"), "--out", str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "1 skipped" in result.output
    rows, _ = _catalog_rows()
    assert [(r["task"], r["kind"], r["tests"]) for r in rows] == [(src.task_id, "program", "3")]
