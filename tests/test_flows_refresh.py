"""Refresh: the catalog, skipping what is built at the same commit, dates, and the index."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from taskfoundry.builders.recipe import RecipeFile
from taskfoundry.cli import main
from taskfoundry.config import Config
from taskfoundry.errors import ConfigError
from taskfoundry.flows.catalog import CatalogEntry, candidates, load_catalog
from taskfoundry.flows.index import BenchmarkIndex, IndexEntry, as_of, load_index
from taskfoundry.flows.recipes import with_recipe
from taskfoundry.models import Images, TaskYaml, save_yaml
from taskfoundry.pipeline.source import source_stage

from conftest import make_repo


def test_catalog_items_are_strings_or_mappings(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    (tmp_path / "cat.yaml").write_text(
        "- here\n- crate:ripgrep\n"
        "- {source: 'https://x.org/a.git#v1', executable: a, recipe: {packages: [zlib1g-dev]},\n"
        "   released_at: 2024-05-01}\n"
    )
    here, crate, url = load_catalog(tmp_path / "cat.yaml")
    assert here.source == str((tmp_path / "here").resolve()) and crate.source == "crate:ripgrep"
    assert url.released_at == datetime(2024, 5, 1) and url.recipe == RecipeFile(packages=["zlib1g-dev"])
    config = url.apply(Config())
    assert config.executable == "a" and config.recipe is not None


@pytest.mark.parametrize("text", ["source: x\n", "- {source: x, colour: red}\n", "- [x\n"])
def test_a_bad_catalog_names_its_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "cat.yaml").write_text(text)
    with pytest.raises(ConfigError, match="cat.yaml"):
        load_catalog(tmp_path / "cat.yaml")


def test_candidates_add_configured_sources_once(tmp_path: Path) -> None:
    (tmp_path / "cat.yaml").write_text("- pypi:black\n- debian:jq\n")
    config = Config.model_validate(
        {
            "orchestration": {
                "refresh": {"catalog": str(tmp_path / "cat.yaml"), "sources": ["debian:jq", "crate:fd-find"]}
            }
        }
    )
    assert [c.source for c in candidates(config)] == ["pypi:black", "debian:jq", "crate:fd-find"]


def test_recipe_override_lies_over_a_copy(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"taskfoundry.yaml": "executable: old\nlanguage: c\n", "a.c": ""})
    config = Config(out=tmp_path / "out")
    src = source_stage(str(repo), config.sources, config.work_dir)
    over = with_recipe(src, RecipeFile(executable="new"), config.work_dir)
    assert over.task_id == src.task_id and over.path != src.path
    merged = yaml.safe_load((over.path / "taskfoundry.yaml").read_text())
    assert merged == {"executable": "new", "language": "c"}
    assert yaml.safe_load((src.path / "taskfoundry.yaml").read_text())["executable"] == "old"
    assert with_recipe(src, RecipeFile(executable="new"), config.work_dir).path == over.path


def _fake_task(config: Config, repo: Path) -> Path:
    src = source_stage(str(repo), config.sources, config.work_dir)
    task = TaskYaml(
        repository=f"{src.owner}/{src.repo}",
        commit=src.commit,
        language="c",
        difficulty="easy",
        eval_clean_hashes=[],
        task_id=src.task_id,
        difficulty_score=0,
        source=src.source,
        created_at=datetime(2025, 1, 2, tzinfo=UTC),
        executable="x",
        images=Images(task="t:task", task_cleanroom="t:task_cleanroom"),
    )
    save_yaml(config.tasks_dir / src.task_id / "task.yaml", task)
    return config.tasks_dir / src.task_id


def test_refresh_skips_what_is_built_and_records_dates(tmp_path: Path, prefect_harness: None) -> None:
    built = make_repo(tmp_path / "built", {"a.c": "int main(void) { return 0; }\n"})
    (tmp_path / "plain").mkdir()
    out = tmp_path / "out"
    task_dir = _fake_task(Config(out=out), built)
    (tmp_path / "cat.yaml").write_text("- built\n- plain\n")
    result = CliRunner().invoke(
        main, ["refresh", "--catalog", str(tmp_path / "cat.yaml"), "--out", str(out), "--no-progress"]
    )
    assert result.exit_code == 1, result.output  # `plain` is no repository
    (run_file,) = (out / "runs").glob("refresh-*.json")
    rows = json.loads(run_file.read_text())["rows"]
    assert [(r["status"], r["task_id"]) for r in rows] == [("skipped", task_dir.name), ("failed", None)]
    assert rows[0]["released_at"] is not None  # the commit date of the built repository
    index = load_index(out)
    assert list(index.tasks) == [task_dir.name] and index.tasks[task_dir.name].released_at is not None


def test_a_version_cut_at_a_date_takes_release_else_creation_dates() -> None:
    def entry(name: str, created: int, released: int | None) -> IndexEntry:
        return IndexEntry(
            task_id=name,
            source=name,
            commit="c",
            created_at=datetime(2025, 1, created),
            released_at=datetime(2024, 1, released) if released else None,
        )

    index = BenchmarkIndex(
        tasks={e.task_id: e for e in [entry("new", 5, None), entry("old", 9, 3), entry("later", 20, None)]}
    )
    assert [e.task_id for e in as_of(index, datetime(2025, 1, 10))] == ["old", "new"]
    assert [e.task_id for e in as_of(index, datetime(2024, 6, 1, tzinfo=UTC))] == ["old"]


def test_index_command_lists_tasks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.c": ""})
    out = tmp_path / "out"
    task_dir = _fake_task(Config(out=out), repo)
    result = CliRunner().invoke(main, ["index", str(out), "--as-of", "2025-02-01"])
    assert result.exit_code == 0 and result.output.startswith(task_dir.name)
    assert CliRunner().invoke(main, ["index", str(out), "--as-of", "2024-02-01"]).output == ""
    assert CatalogEntry(source="x").apply(Config()) == Config()
