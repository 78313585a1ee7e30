"""One home per naming rule: task id, image names, per-task paths, JUnit ids."""

from __future__ import annotations

from pathlib import Path

from taskfoundry.config import Config
from taskfoundry.naming import TaskNames, junit_file, junit_id, junit_name
from taskfoundry.pipeline.results import SourceResult
from taskfoundry.sources import Checkout

SRC = SourceResult(
    path=Path("/x"),
    owner="local",
    repo="csvq",
    commit="abcdef1234",
    source="/x",
    task_id="local__csvq.abcdef1",
)


def test_task_names_follow_programbench() -> None:
    names = TaskNames.of(SRC, "bench", Path("out"))
    assert names.task_id == SRC.task_id == Checkout(Path("/x"), "local", "csvq", "abcdef1234", "/x").task_id
    assert names.images.task == "bench/local_1776_csvq.abcdef1:task"
    assert names.images.task_cleanroom == "bench/local_1776_csvq.abcdef1:task_cleanroom"
    assert names.build_repo == "bench/build-local_1776_csvq"
    assert names.cleanroom_repo == "bench/cleanroom-local_1776_csvq"


def test_task_paths_sit_under_the_run_directories() -> None:
    config = Config(out=Path("out"))
    names = TaskNames.of(SRC, config.namespace, config.out)
    assert names.work_dir == config.work_dir
    assert names.task_dir == config.tasks_dir / SRC.task_id
    assert names.generate_dir == config.work_dir / "generate" / SRC.task_id
    assert names.suite_dir("explorer-seed0") == config.work_dir / "suites" / SRC.task_id / "explorer-seed0"
    assert names.build_dir.parent.name == "builds" and names.cleanroom_dir.parent.name == "cleanroom"


def test_junit_ids_of_files_paths_and_node_ids_agree() -> None:
    assert junit_name("test_a.py", "TestC::test_b[1]") == "eval.tests.test_a.TestC.test_b[1]"
    assert junit_name("/suite/eval/tests/test_a.py", "test_b") == "eval.tests.test_a.test_b"
    assert junit_id("eval/tests/test_a.py::test_b") == junit_name("test_a.py", "test_b")
    assert junit_file("eval.tests.test_a.TestC.test_b[x.y]") == "test_a.py"
