"""An OUT that is an fsspec URL (`s3://bucket/prefix`): tasks, stage results and run records in
object storage, so workers on different machines share no file system.

Each worker builds in a local folder of its own (`local_root`) and publishes what it finished:

- a task directory is uploaded file by file (one put each) under `tasks/<task id>/`, its
  `task.yaml` last: `task.yaml` is the marker that the task is whole. A reader takes only
  directories that hold one (`mirror`), so a writer stopped half way publishes nothing;
  republishing first removes the old marker.
- stage results go to `work/results/` through Prefect's `RemoteFileSystem` (one put a result).
- run records and `index.json` are single puts.

Endpoint and credentials come from the environment only (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` for s3fs), never from the config.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec

from taskfoundry import atomic
from taskfoundry.errors import ConfigError

MARKER = "task.yaml"  # written last: a task directory holding it is whole
TASKS = "tasks"
LOCAL_ENV = "TASKFOUNDRY_LOCAL"  # the worker's own folder for builds of a URL OUT


def is_url(out: object) -> bool:
    """Whether an OUT is an fsspec URL (`s3://...`, `memory://...`) rather than a local path."""
    return isinstance(out, str) and re.match(r"^[a-z][a-z0-9+.-]*://", out) is not None


def local_root(url: str) -> Path:
    """The local folder a worker builds in for the store at `url`: `$TASKFOUNDRY_LOCAL/<slug>`,
    else under `~/.cache/taskfoundry/stores/` (one per store, so two stores never mix)."""
    base = Path(os.environ.get(LOCAL_ENV) or Path.home() / ".cache" / "taskfoundry" / "stores")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", url.split("://", 1)[1]).strip("_")[:60]
    digest = hashlib.sha256(url.encode()).hexdigest()[:8]
    return (base / f"{slug}-{digest}").resolve()


@dataclass(frozen=True)
class Store:
    """The object store at `url`: its file system and the root key under it."""

    url: str
    fs: Any
    root: str

    @classmethod
    def at(cls, url: str) -> Store:
        url = url.rstrip("/")
        try:
            fs, root = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError) as exc:  # e.g. s3:// without s3fs installed
            raise ConfigError(f"{url}: cannot open ({exc}); s3:// needs taskfoundry[s3]") from exc
        return cls(url=url, fs=fs, root=root)

    def key(self, *parts: str) -> str:
        return "/".join([self.root, *parts])

    def url_of(self, *parts: str) -> str:
        return "/".join([self.url, *parts])

    def ensure(self) -> None:
        """Make the bucket (or folder) if it is not there; a store one cannot write fails here."""
        try:
            self.fs.makedirs(self.root, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{self.url}: cannot write ({exc})") from exc

    def put_bytes(self, data: bytes, *parts: str) -> None:
        """One object in one put: readers see the old one or the new one, never part."""
        self.fs.pipe_file(self.key(*parts), data)

    def get_bytes(self, *parts: str) -> bytes | None:
        try:
            data: bytes = self.fs.cat_file(self.key(*parts))
        except FileNotFoundError:
            return None
        return data

    def publish_task(self, task_dir: Path) -> str:
        """Upload a task directory under `tasks/<name>/`, its marker last; its URL."""
        prefix = self.key(TASKS, task_dir.name)
        marker = f"{prefix}/{MARKER}"
        if self.fs.exists(marker):
            self.fs.rm_file(marker)  # unpublished while its files change
        files = sorted(p for p in task_dir.rglob("*") if p.is_file() and p != task_dir / MARKER)
        wanted = {p.relative_to(task_dir).as_posix() for p in files}
        for path in files:
            self.fs.put_file(str(path), f"{prefix}/{path.relative_to(task_dir).as_posix()}")
        for old in self._files(prefix):
            if old not in wanted and old != MARKER:  # left over from an earlier build
                self.fs.rm_file(f"{prefix}/{old}")
        self.fs.put_file(str(task_dir / MARKER), marker)
        self.fs.invalidate_cache(prefix)
        return self.url_of(TASKS, task_dir.name)

    def _files(self, prefix: str) -> list[str]:
        self.fs.invalidate_cache(prefix)
        try:
            found = self.fs.find(prefix)
        except FileNotFoundError:
            return []
        return [f[len(prefix) + 1 :] for f in found]

    def published(self) -> list[str]:
        """Names of the whole task directories: those holding their marker."""
        tasks = self.key(TASKS)
        self.fs.invalidate_cache(tasks)
        try:
            markers = self.fs.glob(f"{tasks}/*/{MARKER}")
        except FileNotFoundError:
            return []
        return sorted(m.rsplit("/", 2)[-2] for m in markers)

    def task_marker(self, name: str) -> bytes | None:
        return self.get_bytes(TASKS, name, MARKER)

    def fetch_task(self, name: str, tasks: Path) -> Path | None:
        """Copy the published task `name` into `tasks/<name>` (kept when its marker is the same);
        None when the store holds no whole task of that name."""
        marker = self.task_marker(name)
        if marker is None:
            return None
        final = tasks / name
        if (final / MARKER).is_file() and (final / MARKER).read_bytes() == marker:
            return final
        prefix = self.key(TASKS, name)
        with atomic.staged_dir(final) as tmp:
            for rel in self._files(prefix):
                if rel != MARKER:
                    target = tmp / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    self.fs.get_file(f"{prefix}/{rel}", str(target))
            (tmp / MARKER).write_bytes(marker)  # the one read before the files
        return final

    def check(self) -> None:
        """One clear error when the store cannot be read (no bucket, no server, no credentials)."""
        try:
            self.fs.invalidate_cache(self.root)
            self.fs.ls(self.root)
        except FileNotFoundError as exc:
            raise ConfigError(f"{self.url}: no such bucket or prefix") from exc
        except Exception as exc:  # botocore's errors are not OSErrors; each is a bad store here
            raise ConfigError(f"{self.url}: cannot read ({type(exc).__name__}: {exc})") from exc

    def mirror(self, local: Path) -> list[str]:
        """Copy every whole published task (and `index.json`) into the OUT folder `local`; the
        names of the tasks copied."""
        self.check()
        (local / TASKS).mkdir(parents=True, exist_ok=True)
        names = self.published()
        for name in names:
            self.fetch_task(name, local / TASKS)
        index = self.get_bytes("index.json")
        if index is not None:
            atomic.write_bytes(local / "index.json", index)
        return names


def out_url(url: str) -> str:
    """The OUT a store URL names: `s3://b/out/tasks` is `s3://b/out`, as a local path's `tasks/`
    folder is its OUT's (read at the wrong level it held no task, and said nothing)."""
    url = url.rstrip("/")
    return url[: -len(TASKS) - 1] if url.endswith(f"/{TASKS}") else url


def open_out(path: str | Path) -> Path:
    """A local OUT (or tasks) folder for `path`: itself, or for a URL its local mirror. A store
    holding no whole task is an error: a reader given the wrong prefix must not see zero tasks."""
    if not is_url(str(path)):
        return Path(path)
    url = out_url(str(path))
    local = local_root(url)
    if not Store.at(url).mirror(local):
        raise ConfigError(f"{path}: no task published there (no {TASKS}/<task id>/{MARKER} under {url})")
    return local
