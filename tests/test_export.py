"""`taskfoundry export OUT --format programbench DEST`: ProgramBench's loaders' layout, on task
folders written by hand (the real run of mini-swe-agent on an export is in
tests/test_harness_docker.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry.catalog import Catalog
from taskfoundry.catalog.export import export_programbench
from taskfoundry.cli import main
from taskfoundry.errors import ReleaseError
from taskfoundry.naming import programbench_image

from catalog_support import sample_out, write_task

PROGRAM_IDS = ["acme__alpha.aaaaaaa", "acme__beta.bbbbbbb", "zeta__eps.eeeeeee"]


def test_program_tasks_are_written_as_programbench_reads_them(tmp_path: Path) -> None:
    out = sample_out(tmp_path / "out")
    dest = tmp_path / "pb" / "data" / "tasks"
    done = export_programbench(Catalog.load(out), dest)
    assert done.written == PROGRAM_IDS
    assert set(done.skipped) == {"acme__gamma.ccccccc", "zeta__delta.ddddddd"}
    assert sorted(p.name for p in dest.iterdir()) == PROGRAM_IDS
    for task_id in PROGRAM_IDS:
        # the definitions only: the hidden suite stays in the task folder, read as the blob dir
        assert sorted(p.name for p in (dest / task_id).iterdir()) == ["task.yaml", "tests.json"]
        for name in ("task.yaml", "tests.json"):
            assert (dest / task_id / name).read_bytes() == (out / "tasks" / task_id / name).read_bytes()
        assert (dest / task_id).stat().st_mode & 0o055 == 0o055  # readable by the harness's user
    assert done.env == {
        "PROGRAMBENCH_DOCKER_ORG": "taskfoundry",
        "PROGRAMBENCH_BLOB_DIR": str((out / "tasks").resolve()),
    }
    # the blob a ProgramBench evaluator opens: $BLOB_DIR/<id>/tests/<branch>.tar.gz
    assert list((out / "tasks" / PROGRAM_IDS[0] / "tests").glob("*.tar.gz"))
    assert programbench_image("acme__alpha.aaaaaaa", "taskfoundry") == (
        "taskfoundry/acme_1776_alpha.aaaaaaa:task_cleanroom_v6"
    )


def test_a_second_export_replaces_the_first_whole(tmp_path: Path) -> None:
    out = sample_out(tmp_path / "out")
    dest = tmp_path / "dest"
    export_programbench(Catalog.load(out), dest)
    (dest / PROGRAM_IDS[0] / "stale").write_text("from an earlier export")
    export_programbench(Catalog.load(out), dest)
    assert not (dest / PROGRAM_IDS[0] / "stale").exists()
    assert not [p for p in dest.iterdir() if p.name.startswith(".")]


def test_two_namespaces_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    tasks = tmp_path / "out" / "tasks"
    write_task(tasks, "acme__alpha.aaaaaaa")
    write_task(tasks, "acme__beta.bbbbbbb", namespace="other")
    with pytest.raises(ReleaseError, match="one image namespace"):
        export_programbench(Catalog.load(tmp_path / "out"), tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_an_image_the_harness_would_not_find_is_refused(tmp_path: Path) -> None:
    tasks = tmp_path / "out" / "tasks"
    task = write_task(tasks, "acme__alpha.aaaaaaa")
    text = (task / "task.yaml").read_text().replace("acme_1776_alpha", "acme-alpha")
    (task / "task.yaml").write_text(text)
    with pytest.raises(ReleaseError, match="would run taskfoundry/acme_1776_alpha.aaaaaaa:task_cleanroom_v6"):
        export_programbench(Catalog.load(tmp_path / "out"), tmp_path / "dest")


def test_the_command_says_what_to_set_and_refuses_what_it_cannot_export(tmp_path: Path) -> None:
    out = sample_out(tmp_path / "out")
    dest = tmp_path / "dest"
    runner = CliRunner()
    ok = runner.invoke(
        main, ["export", str(out), str(dest), "--format", "programbench", "--id", PROGRAM_IDS[1]]
    )
    assert ok.exit_code == 0, ok.output
    assert f"exported 1 tasks to {dest}: {PROGRAM_IDS[1]}" in ok.stdout
    assert "export PROGRAMBENCH_DOCKER_ORG=taskfoundry" in ok.stdout
    assert f"export PROGRAMBENCH_BLOB_DIR={(out / 'tasks').resolve()}" in ok.stdout
    assert [p.name for p in dest.iterdir()] == [PROGRAM_IDS[1]]
    unknown = runner.invoke(
        main, ["export", str(out), str(dest), "--format", "programbench", "--id", "no__such.1234567"]
    )
    assert unknown.exit_code != 0 and "no task no__such.1234567" in unknown.output
    only_function = runner.invoke(
        main, ["export", str(out), str(dest), "--format", "programbench", "--id", "acme__gamma.ccccccc"]
    )
    assert only_function.exit_code != 0 and "no program task among the 1 selected" in only_function.output
    wrong = runner.invoke(main, ["export", str(out), str(dest), "--format", "swebench"])
    assert wrong.exit_code == 2 and "Invalid value for '--format'" in wrong.output
