"""`taskfoundry clean`: a task's (or an OUT folder's) images and caches removed, and what that freed.

A task's images are tags of content-addressed images (`build-…`, `cleanroom-…`): the space comes
back only when every tag of an image is gone, so each image the task names loses all its tags,
unless another task of the same folder names it too (a source's function tasks share one).
Caches are the task's folders under `OUT/work/` (builds, cleanroom, generate, suites, a kind's
own); cleaning an OUT folder removes all of `OUT/work/` but its logs, and the stage results with
it. Task directories stay: what was built and measured is kept, it needs a rebuild to grade.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import docker
import yaml
from docker.errors import APIError, ImageNotFound
from pydantic import BaseModel, ValidationError

from taskfoundry.errors import ConfigError
from taskfoundry.models import Images
from taskfoundry.naming import grading_image, work_dir

KEPT_IN_WORK = ("logs",)  # a run's record, not a cache


class _Named(BaseModel):
    task_id: str
    images: Images


@dataclass
class Cleaned:
    """What a clean removed (or, dry, would remove)."""

    tags: list[str] = field(default_factory=list)
    dirs: list[Path] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)  # image -> why it stays
    file_bytes: int = 0
    image_bytes: int = 0  # the unshared bytes of the images the engine deleted (dry: would delete)

    @property
    def freed(self) -> int:
        return self.file_bytes + self.image_bytes


def clean(target: Path, client: docker.DockerClient, dry_run: bool = False) -> Cleaned:
    """Remove the images and caches of the task in `target` (a task directory) or of every task
    in `target` (an OUT folder)."""
    chosen, out = _chosen(target)
    others = [t for t in _tasks(out) if t.task_id not in {c.task_id for c in chosen}]
    done = Cleaned()
    ids = _image_ids(client, chosen, others, done)
    done.dirs = _cache_dirs(out, chosen, whole=target.resolve() == out.resolve())
    done.file_bytes = sum(_size(d) for d in done.dirs)
    # sized before the removal, per image: the engine's layer total before and after would also
    # count what other builds on the engine add or remove meanwhile (a batch, a test worker)
    sizes = _unique_bytes(client, set(ids))
    if dry_run:
        done.tags = sorted({t for tags in ids.values() for t in tags})
        done.image_bytes = sum(sizes.values())
        return done
    deleted = {i for tags in ids.values() for i in _untag(client, tags, done)}
    for d in done.dirs:
        shutil.rmtree(d, ignore_errors=True)
    done.image_bytes = sum(sizes.get(i, 0) for i in deleted)
    return done


def _chosen(target: Path) -> tuple[list[_Named], Path]:
    if (target / "task.yaml").is_file():
        return [_named(target)], target.parent.parent  # OUT/tasks/<id>
    if (target / "tasks").is_dir() or work_dir(target).is_dir():
        return _tasks(target), target
    raise ConfigError(
        f"{target}: neither a task directory (no task.yaml) nor an OUT folder (no tasks/ or work/)"
    )


def _named(task_dir: Path) -> _Named:
    try:
        return _Named.model_validate(yaml.safe_load((task_dir / "task.yaml").read_text()))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ConfigError(
            f"{task_dir / 'task.yaml'}: unreadable ({type(exc).__name__}): nothing removed"
        ) from exc


def _tasks(out: Path) -> list[_Named]:
    root = out / "tasks"
    found = sorted(p for p in root.iterdir() if (p / "task.yaml").is_file()) if root.is_dir() else []
    return [_named(p) for p in found]


def _names(task: _Named) -> list[str]:
    return [task.images.task, task.images.task_cleanroom, grading_image(task.images)]


def _image_ids(
    client: docker.DockerClient, chosen: list[_Named], others: list[_Named], done: Cleaned
) -> dict[str, list[str]]:
    """Each image the chosen tasks name, by id, with every tag it has; those another task names
    are kept (and said)."""
    shared = {i for t in others for i in _ids(client, _names(t))}
    ids: dict[str, list[str]] = {}
    for task in chosen:
        for name in _names(task):
            image = _image(client, name)
            if image is None:
                continue
            if image.id in shared:
                done.kept[name] = "another task of this folder uses it"
                continue
            ids[image.id] = list(image.tags)
    return ids


def _ids(client: docker.DockerClient, names: list[str]) -> set[str]:
    return {image.id for image in (_image(client, n) for n in names) if image is not None}


def _image(client: docker.DockerClient, name: str) -> docker.models.images.Image | None:
    try:
        return client.images.get(name)
    except ImageNotFound:
        return None


def _untag(client: docker.DockerClient, tags: list[str], done: Cleaned) -> set[str]:
    """Remove `tags` (each removed one into `done`); the ids of the images the engine deleted."""
    deleted: set[str] = set()
    for tag in tags:
        try:
            answer = client.api.remove_image(tag)
        except ImageNotFound:
            continue
        except APIError as exc:  # a container still uses it: say so, go on
            done.kept[tag] = exc.explanation or str(exc)
            continue
        done.tags.append(tag)
        deleted |= {str(a["Deleted"]) for a in answer or [] if a.get("Deleted")}
    return deleted


def _cache_dirs(out: Path, chosen: list[_Named], whole: bool) -> list[Path]:
    work = work_dir(out)
    if not work.is_dir():
        return []
    if whole:
        return sorted(p for p in work.iterdir() if p.is_dir() and p.name not in KEPT_IN_WORK)
    names = {t.task_id for t in chosen}
    # OUT/work/<stage>/<id> and OUT/work/<kind>/<id>/...; a function or feature task's caches are
    # its source's (its id's stem), shared by the source's other tasks: left
    return sorted(p for stage in work.iterdir() if stage.is_dir() for p in stage.iterdir() if p.name in names)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _unique_bytes(client: docker.DockerClient, ids: set[str]) -> dict[str, int]:
    """Each of `ids`' bytes no other image shares: what its removal frees (a layer only images
    being removed share is not counted: the figure is at most what is freed)."""
    return {
        str(i["Id"]): max(int(i.get("Size", 0)) - int(i.get("SharedSize", 0)), 0)
        for i in client.df().get("Images") or []
        if i.get("Id") in ids
    }
