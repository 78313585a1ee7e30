"""Releases: a dated, named snapshot of the tasks released before a date, for another machine.

    RELEASE/
      tasks/<task id>/        the task directories (ProgramBench's task.yaml + tests.json, and
                              its blob folder: PROGRAMBENCH_BLOB_DIR=RELEASE/tasks)
      catalog.jsonl           the task records, paths relative to RELEASE
      index.json              created and release dates (`taskfoundry index`'s format)
      images/images.tar       `docker save` of every task's :task, :task_cleanroom (and
                              ProgramBench's :task_cleanroom_v6) image
      release.json            name, cut-off, tasks, images, the card's figures
      README.md               the dataset card
      manifest.jsonl          sha256 and size of every other file

Made in a temporary folder and renamed into place; `load_release` refuses a release
whose files differ from its manifest, naming each file.
"""

from __future__ import annotations

import logging
import shutil
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import docker
import yaml
from pydantic import BaseModel, Field

from taskfoundry import atomic, progress
from taskfoundry.catalog.card import CardSummary, dataset_card
from taskfoundry.catalog.catalog import Catalog, LoadError
from taskfoundry.catalog.grading import engine
from taskfoundry.catalog.images import load_images, release_images, save_images, tag_images
from taskfoundry.catalog.index import BenchmarkIndex, IndexEntry
from taskfoundry.catalog.manifest import check_manifest, write_manifest
from taskfoundry.catalog.records import TaskRecord
from taskfoundry.errors import ReleaseError
from taskfoundry.models import load_json_model, save_json

log = logging.getLogger(__name__)
RELEASE_JSON = "release.json"
IMAGES_TAR = "images/images.tar"


class ReleaseInfo(BaseModel):
    """release.json."""

    schema_version: int = 1
    name: str
    as_of: datetime
    created_at: datetime
    taskfoundry_version: str
    namespace: str = Field(description="image namespace: $PROGRAMBENCH_DOCKER_ORG")
    tasks: list[str]
    images: list[str] = Field(default_factory=list, description="names saved in images/images.tar")
    left_out: list[LoadError] = Field(
        default_factory=list, description="malformed tasks and tasks below their gate: not released"
    )
    summary: CardSummary


def _copy_task(record: TaskRecord, root: Path, namespace: str) -> TaskRecord:
    """Copy a task directory into the release at `root`; rename its images in task.yaml (raw
    YAML: fields newer than this TaskYaml survive)."""
    assert record.task_dir is not None
    names = record.names(namespace, root)
    shutil.copytree(record.task_dir, names.task_dir, ignore=shutil.ignore_patterns("__pycache__"))
    new = names.images
    if (new.task, new.task_cleanroom) != (record.image, record.cleanroom_image):
        data = yaml.safe_load((names.task_dir / "task.yaml").read_text())
        data["images"] = new.model_dump()
        atomic.write_yaml(names.task_dir / "task.yaml", data)
    path = names.task_dir.relative_to(root).as_posix()
    return record.model_copy(update={"image": new.task, "cleanroom_image": new.task_cleanroom, "path": path})


def _index(records: list[TaskRecord]) -> BenchmarkIndex:
    return BenchmarkIndex(
        tasks={
            r.task_id: IndexEntry(
                task_id=r.task_id,
                source=r.source,
                commit=r.commit,
                created_at=r.created_at,
                released_at=r.released_at,
            )
            for r in records
        }
    )


def make_release(
    out: Path,
    dest: Path,
    name: str,
    as_of: datetime,
    *,
    namespace: str | None = None,
    images: bool = True,
    client: docker.DockerClient | None = None,
    below_gate: bool = False,
) -> ReleaseInfo:
    """Release the tasks of `out` released (else built) before `as_of` into `dest`; a task below
    its acceptance gate only with `below_gate` (else it is left out, and said so)."""
    if dest.exists():
        raise ReleaseError(f"{dest} exists: a release is never overwritten (choose another name)")
    full = Catalog.load(out)
    before = full.filter(released_before=as_of)
    cat = before if below_gate else before.gated()
    if not len(cat):
        below = f" ({len(before)} below the acceptance gate: --below-gate)" if len(before) else ""
        raise ReleaseError(f"no task of {out} was released before {as_of:%Y-%m-%d}{below}")
    ns = namespace or cat.tasks()[0].cleanroom_image.split("/", 1)[0]
    saved: list[str] = []
    with atomic.staged_dir(dest) as tmp:
        with progress.working_on(f"release {name}", "tasks"):
            records = [_copy_task(r, tmp, ns) for r in cat]
        if images:
            own = client is None
            engine_client = client or engine()
            try:
                renames = {
                    old: new for r in cat for old, new in release_images(engine_client, r, ns, tmp).items()
                }
                tag_images(engine_client, renames)
                saved = sorted(renames.values())
                with progress.working_on(f"release {name}", f"saving {len(saved)} images"):
                    save_images(engine_client, saved, tmp / IMAGES_TAR)
            finally:
                if own:
                    engine_client.close()
        released = Catalog(records)
        released.dump(tmp / "catalog.jsonl")
        save_json(tmp / "index.json", _index(records))
        info = ReleaseInfo(
            name=name,
            as_of=as_of,
            created_at=datetime.now(UTC),
            taskfoundry_version=version("taskfoundry"),
            namespace=ns,
            tasks=released.ids(),
            images=saved,
            left_out=cat.errors,
            summary=CardSummary.of(released),
        )
        save_json(tmp / RELEASE_JSON, info)
        made = f"{info.created_at:%Y-%m-%d %H:%M} UTC with taskfoundry {info.taskfoundry_version}"
        card = dataset_card(name, f"{as_of:%Y-%m-%d}", made, ns, released, images)
        atomic.write_text(tmp / "README.md", card)
        write_manifest(tmp)
        atomic.readable(tmp)
    log.info("release %s: %d tasks in %s", name, len(records), dest)
    return info


def check_release(root: Path) -> ReleaseInfo:
    """The release's info, once every file matches its manifest; ReleaseError naming each that does not."""
    if not (root / RELEASE_JSON).is_file():
        raise ReleaseError(f"{root}: not a release (no {RELEASE_JSON})")
    problems = check_manifest(root)
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ReleaseError(f"{root}: {len(problems)} file(s) differ from manifest.jsonl:\n  {shown}{more}")
    return load_json_model(root / RELEASE_JSON, ReleaseInfo)


def load_release(root: Path, *, images: bool = True) -> ReleaseInfo:
    """Check every file's hash, then load the release's images into the local engine."""
    info = check_release(root)
    if images and info.images:
        engine().close()  # a clear "Docker is not available" before the CLI's own error
        load_images(root / IMAGES_TAR)
    return info
