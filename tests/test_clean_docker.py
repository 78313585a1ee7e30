"""`taskfoundry clean` (issue 59) on a real engine: a task's images lose every tag (so their
layers go), its caches under OUT/work go, and it says what that freed; an image another task of
the folder names stays."""

from __future__ import annotations

import io
import os
import tarfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from taskfoundry.catalog import clean as clean_module
from taskfoundry.cli import main
from taskfoundry.images.build import image_exists

from catalog_support import write_task

pytestmark = pytest.mark.docker
MB = 1 << 20


def _image(client, repo: str, tag: str) -> str:  # type: ignore[no-untyped-def]
    """A one-layer image of 3 MB of its own (random bytes: no layer is shared); its id."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = os.urandom(3 * MB)
        info = tarfile.TarInfo("blob")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    client.api.import_image_from_data(buf.getvalue(), repository=repo, tag=tag)
    return str(client.images.get(f"{repo}:{tag}").id)


def test_clean_removes_a_task_s_images_and_caches_and_says_what_it_freed(
    docker_client,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    ns = f"tfclean{uuid.uuid4().hex[:8]}"
    out = tmp_path / "out"
    task = write_task(out / "tasks", "acme__tool.abcdef1", namespace=ns)
    sibling = write_task(out / "tasks", "acme__other.bcdefa2", namespace=ns)
    base = f"{ns}/acme_1776_tool.abcdef1"
    _image(docker_client, base, "task")
    _image(docker_client, base, "task_cleanroom")
    docker_client.images.get(f"{base}:task").tag(f"{ns}/build-acme_1776_tool", "c0ffee")  # its stage cache
    docker_client.images.get(f"{base}:task_cleanroom").tag(f"{ns}/acme_1776_other.bcdefa2", "task")
    for stage in ("builds", "generate"):
        (out / "work" / stage / task.name).mkdir(parents=True)
        (out / "work" / stage / task.name / "f").write_bytes(b"x" * MB)
    (out / "work" / "generate" / sibling.name).mkdir()
    try:
        dry = CliRunner().invoke(main, ["clean", "--dry-run", str(task)])
        assert dry.exit_code == 0, dry.output
        assert "would remove 2 image tags and 2 cache folders" in dry.output, dry.output
        assert image_exists(docker_client, f"{base}:task") and (out / "work" / "builds" / task.name).is_dir()

        result = CliRunner().invoke(main, ["clean", str(task)])
        assert result.exit_code == 0, result.output
        assert f"removed 2 image tags and 2 cache folders of {task}" in result.output
        assert f"kept {base}:task_cleanroom: another task of this folder uses it" in result.output
        freed = result.output.split("freed ")[1]
        assert freed.startswith(("3.", "4.", "5.")) and "MB of images, 2.1 MB of files" in freed, freed
        assert not image_exists(docker_client, f"{base}:task")
        assert not image_exists(docker_client, f"{ns}/build-acme_1776_tool:c0ffee")
        assert image_exists(docker_client, f"{base}:task_cleanroom")  # the sibling's
        assert (task / "task.yaml").is_file() and (out / "work" / "generate" / sibling.name).is_dir()
        assert not (out / "work" / "builds" / task.name).exists()

        whole = CliRunner().invoke(main, ["clean", str(out)])  # the folder: every task, all of work/
        assert whole.exit_code == 0 and not image_exists(docker_client, f"{base}:task_cleanroom")
        assert not (out / "work" / "generate").exists()
    finally:
        for image in docker_client.images.list(name=f"{ns}/*"):
            docker_client.images.remove(image.id, force=True)


def test_what_a_clean_freed_is_its_own_while_another_build_adds_images(
    docker_client,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    """Another build loads an image of 3 MB while the clean removes the task's: the engine's layer
    total is then where it was, yet the clean freed 3 MB (the failure a suite run met: "0 bytes of
    images" while the other xdist worker built)."""
    ns = f"tfclean{uuid.uuid4().hex[:8]}"
    out = tmp_path / "out"
    task = write_task(out / "tasks", "acme__tool.abcdef1", namespace=ns)
    _image(docker_client, f"{ns}/acme_1776_tool.abcdef1", "task")
    untag = clean_module._untag

    def untag_while_another_builds(*args: Any) -> set[str]:
        deleted = untag(*args)
        _image(docker_client, f"{ns}/another-build", uuid.uuid4().hex[:8])
        return deleted

    monkeypatch.setattr(clean_module, "_untag", untag_while_another_builds)
    try:
        result = CliRunner().invoke(main, ["clean", str(task)])
        assert result.exit_code == 0, result.output
        assert "freed 3." in result.output and "MB of images" in result.output, result.output
    finally:
        for image in docker_client.images.list(name=f"{ns}/*"):
            docker_client.images.remove(image.id, force=True)


def test_clean_refuses_a_folder_that_is_neither_a_task_nor_an_out_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["clean", str(tmp_path)])
    assert result.exit_code == 1
    assert "neither a task directory (no task.yaml) nor an OUT folder" in result.output
