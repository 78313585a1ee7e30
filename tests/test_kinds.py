"""The task-kind seam: a registry of kinds, the program kind behind it, the others named."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from taskfoundry.cli import main
from taskfoundry.config import Config, load_config
from taskfoundry.errors import ConfigError
from taskfoundry.flows.tasks import BUILD, kind_pipeline
from taskfoundry.kinds.base import PARTS, make_kind, unchanged
from taskfoundry.kinds.program.kind import ProgramKind
from taskfoundry.kinds.registry import KINDS
from taskfoundry.models import Images, TaskYaml, load_yaml_model, save_yaml

from conftest import make_repo


def test_program_is_the_default_kind_and_fits_the_seam() -> None:
    assert Config().kind == "program"
    kind = make_kind("program")
    assert isinstance(kind, ProgramKind) and set(kind.stages) == set(PARTS)
    assert [kind.stages[p].name for p in PARTS] == ["cleanroom", "generate", "lint", "filter", "mutation"]
    assert kind_pipeline(kind) == (
        BUILD,
        "taskfoundry.kinds.program.cleanroom.stage",
        "taskfoundry.kinds.program.testgen.stage",
        "taskfoundry.kinds.program.lint",
        "taskfoundry.kinds.program.filter.stage",
        "taskfoundry.kinds.program.mutate.stage",
    )


def test_a_kind_without_a_strengthen_stage_packages_what_it_validated() -> None:
    class Plain(ProgramKind):
        stages = {part: stage for part, stage in ProgramKind.stages.items() if part != "strengthen"}
        strengthen = staticmethod(unchanged)

    assert kind_pipeline(Plain())[-1] == "taskfoundry.kinds.program.filter.stage"
    suite, verdict = object(), object()
    assert Plain.strengthen(None, None, None, suite, None, verdict, None, None) == (suite, verdict)  # type: ignore[arg-type]


def test_an_unknown_kind_lists_the_kinds() -> None:
    with pytest.raises(ConfigError, match=r"unknown task kind 'proggram'; kinds: program, function, feature"):
        make_kind("proggram")
    with pytest.raises(ValueError, match="unknown task kind 'proggram'"):
        Config(kind="proggram")


def test_the_feature_kind_is_built() -> None:
    kind = make_kind("feature")
    assert kind.name == "feature" and [s.name for s in kind.stages.values()] == [
        "environment",
        "trace",
        "review",
        "validate",
    ]


def test_build_with_an_unknown_kind_fails_before_any_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# r\n"})
    bad = CliRunner().invoke(
        main, ["build", str(repo), "--out", str(tmp_path / "out"), "--kind", "functions"]
    )
    assert not (tmp_path / "out").exists()  # no flow ran: nothing resolved, nothing built
    assert bad.exit_code == 2 and "'program', 'function', 'feature'" in bad.output


def test_the_kind_comes_from_the_config_file_too(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"kind": "feature"}))
    assert load_config(path).kind == "feature"


def _task(**extra: object) -> TaskYaml:
    images = Images(task="ns/o_1776_r.aaaaaaa:task", task_cleanroom="ns/o_1776_r.aaaaaaa:task_cleanroom")
    fields = dict(
        repository="o/r",
        commit="a" * 40,
        language="c",
        difficulty="easy",
        eval_clean_hashes=["0" * 64],
        task_id="o__r.aaaaaaa",
        difficulty_score=1.0,
        source="/r",
        created_at="2025-01-01T00:00:00Z",
        executable="r",
        images=images,
    )
    return TaskYaml.model_validate({**fields, **extra})


def test_task_yaml_names_its_kind_and_reads_older_files_as_programs(tmp_path: Path) -> None:
    save_yaml(tmp_path / "task.yaml", _task())
    written = yaml.safe_load((tmp_path / "task.yaml").read_text())
    assert written["kind"] == "program"
    del written["kind"]  # a task.yaml written before kinds existed
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(written))
    assert load_yaml_model(tmp_path / "old.yaml", TaskYaml).kind == "program"
    assert _task(kind="function").kind == "function"


def test_kind_packages_import_nothing() -> None:
    """A stage's code key covers the packages above its module: an import in a kind's
    `__init__` would tie every stage of the kind to all of it."""
    from taskfoundry.flows.codegraph import import_graph

    graph = import_graph()
    for package in ("taskfoundry.kinds", *(f"taskfoundry.kinds.{k}" for k in KINDS), "taskfoundry.pipeline"):
        assert graph[package] == frozenset(), package


@pytest.mark.parametrize("module", ["taskfoundry.kinds.base", "taskfoundry.flows.build"])
def test_the_seam_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """No import cycle through a package's __init__ (evaluate/__init__ -> evaluate.run -> the seam)."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-1500:]
