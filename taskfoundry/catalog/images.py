"""Task images in and out of a release: `docker save` into one archive, `docker load` back.

One archive for every image of a release: the images share their base layers, which
`docker save` then writes once. The docker CLI streams; docker-py's `save` is one
image at a time and its `load` reads the whole archive into memory.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import docker

from taskfoundry import progress
from taskfoundry.catalog.records import TaskRecord
from taskfoundry.errors import ReleaseError
from taskfoundry.images.build import image_exists, tag_alias
from taskfoundry.models import Images
from taskfoundry.naming import grading_image

POLL_SECONDS = 0.5


def release_images(
    client: docker.DockerClient, record: TaskRecord, namespace: str, root: Path
) -> dict[str, str]:
    """Each image of the task, as built -> as named in the release (under `namespace`, by
    `naming.TaskNames`): `:task`, `:task_cleanroom`, and ProgramBench's `:task_cleanroom_v6`
    where the task has one (tasks built before it existed do not)."""
    new = record.names(namespace, root).images
    renames = {record.image: new.task, record.cleanroom_image: new.task_cleanroom}
    v6 = grading_image(Images(task=record.image, task_cleanroom=record.cleanroom_image))
    if image_exists(client, v6):
        renames[v6] = grading_image(new)
    return renames


def tag_images(client: docker.DockerClient, names: dict[str, str]) -> None:
    """Tag each image `old` as `new` (on the same engine; nothing is copied)."""
    _require(client, list(names))
    for old, new in names.items():
        if old != new:
            tag_alias(client, old, new)


def _require(client: docker.DockerClient, images: list[str]) -> None:
    missing = [name for name in images if not image_exists(client, name)]
    if missing:
        raise ReleaseError(f"not on this Docker engine: {', '.join(missing)} (build the tasks here first)")


def _docker(args: list[str], what: str, timeout: float, growing: Path | None = None) -> None:
    """Run the docker CLI; while it runs, what it has written of `growing` is counted as progress."""
    exe = shutil.which("docker")
    if exe is None:
        raise ReleaseError(f"{what} needs the docker command line (not found on PATH)")
    deadline = time.monotonic() + timeout
    with subprocess.Popen([exe, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        while True:
            try:
                _, stderr = proc.communicate(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    proc.kill()
                    raise ReleaseError(f"{what} took longer than {timeout:.0f} s") from None
                if growing is not None:
                    progress.count("MB written", _written(growing) >> 20)
    if proc.returncode != 0:
        raise ReleaseError(f"{what} failed (exit {proc.returncode}): {stderr.strip()[-2000:]}")


def _written(archive: Path) -> int:
    """Bytes written so far: the docker CLI writes a temporary file beside `archive` and renames
    it at the end, so the folder's files are counted (the archive has a folder of its own)."""
    total = 0
    for path in archive.parent.iterdir():
        try:
            total += path.stat().st_size
        except FileNotFoundError:  # renamed as we looked: counted under its new name next time
            continue
    return total


def save_images(client: docker.DockerClient, images: list[str], archive: Path, timeout: float = 3600) -> None:
    """`docker save` of `images` into `archive`, counting the megabytes written as it goes
    (a release's 1.6 GB take a minute)."""
    _require(client, images)
    archive.parent.mkdir(parents=True, exist_ok=True)
    _docker(["save", "-o", str(archive), *images], f"docker save of {len(images)} images", timeout, archive)


def load_images(archive: Path, timeout: float = 3600) -> None:
    if not archive.is_file():
        raise ReleaseError(f"no image archive at {archive}")
    _docker(["load", "-q", "-i", str(archive)], f"docker load of {archive}", timeout)
