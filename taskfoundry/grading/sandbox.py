"""GradingSandbox: a DockerSandbox hardened for untrusted submissions.

Read-only root filesystem; /workspace and /tmp are size-capped tmpfs volumes (created
empty: the image's /workspace, gold executable included, is never seen); /reference (the
gold's root-owned copy) is an empty tmpfs; the worker's
home, /var/tmp and /run/lock are size-capped tmpfs mounts; no network, no new
privileges, pids and memory limits. Nothing a submission writes reaches the host's
disk. After untrusted code has run the container is only paused and read from (no
more `docker exec`: a fork bomb can leave no room for one).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from types import TracebackType
from typing import IO, Any

import docker
from docker.errors import APIError, DockerException, NotFound
from docker.models.volumes import Volume
from docker.types import Mount

from taskfoundry.errors import SandboxError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.layout import REFERENCE_DIR, WORKSPACE
from taskfoundry.sandbox import tarutil
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)
WS = WORKSPACE
LABEL = {"taskfoundry": "eval"}


class TooLarge(Exception):
    """A file or archive read back from a container exceeded its cap."""


class GradingSandbox(DockerSandbox):
    def __init__(
        self, image: str, config: EvalConfig, client: docker.DockerClient, workspace_mb: int | None = None
    ) -> None:
        limits = SandboxLimits(
            memory_mb=config.memory_mb, pids=config.pids, output_bytes=config.output_bytes, user=config.user
        )
        super().__init__(image, limits, workdir=WS, client=client, labels=LABEL)
        self.config = config
        self.workspace_mb = workspace_mb or config.workspace_mb
        self._volumes: list[Volume] = []

    def __enter__(self) -> GradingSandbox:
        assert self._client is not None
        try:
            options = self._run_options()
            self._container = self._client.containers.run(self.image, ["sleep", "infinity"], **options)
        except (APIError, DockerException) as exc:
            self._remove_volumes()
            raise SandboxError(f"cannot start a container from {self.image}: {exc}") from exc
        except SandboxError:
            self._remove_volumes()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        super().__exit__(exc_type, exc, tb)
        self._remove_volumes()

    def _run_options(self) -> dict[str, Any]:
        cfg = self.config
        uid, _, gid = cfg.user.partition(":")
        workspace = self._volume(f"size={self.workspace_mb}m,uid={uid},gid={gid or uid},mode=0755")
        tmp = self._volume(f"size={cfg.tmp_mb}m,mode=1777")
        options: dict[str, Any] = {"nano_cpus": int(cfg.cpus * 1e9)} if cfg.cpus else {}
        return options | {
            "detach": True,
            "init": True,  # reaps the zombies a program's orphans become (pids_limit counts them)
            "network_mode": "none",
            "read_only": True,
            "user": "0:0",
            "working_dir": WS,
            "labels": LABEL,
            "security_opt": ["no-new-privileges"],
            "mem_limit": f"{cfg.memory_mb}m",
            "memswap_limit": f"{cfg.memory_mb}m",
            "pids_limit": cfg.pids,
            "mounts": [
                Mount(WS, workspace, type="volume", no_copy=True),
                Mount("/tmp", tmp, type="volume", no_copy=True),
            ],
            "tmpfs": {
                cfg.home: f"size={cfg.home_mb}m,uid={uid},gid={gid or uid},mode=0700,exec",
                "/var/tmp": "size=64m,mode=1777",
                "/run/lock": "size=1m,mode=1777",
                # the worker's reference copy of the gold: a submission must not run it
                REFERENCE_DIR: "size=1m,mode=0755",
            },
        }

    def _volume(self, options: str) -> str:
        """A fresh tmpfs volume: its size is the cap on what can be written there."""
        assert self._client is not None
        name = f"tf-eval-{uuid.uuid4().hex[:16]}"
        opts = {"type": "tmpfs", "device": "tmpfs", "o": options}
        try:
            vol = self._client.volumes.create(name, driver="local", driver_opts=opts, labels=LABEL)
        except (APIError, DockerException) as exc:
            raise SandboxError(f"cannot create volume {name}: {exc}") from exc
        self._volumes.append(vol)
        return name

    def _remove_volumes(self) -> None:
        for vol in self._volumes:
            try:
                vol.remove(force=True)
            except NotFound:
                pass
            except APIError as err:
                log.warning("could not remove volume %s: %s", vol.name, err)
        self._volumes = []

    # after untrusted code: pause, then read -------------------------------
    def freeze(self, attempts: int = 3) -> None:
        """Pause every process in the container (a fork bomb or a report forger included). The
        cgroup freezer can give up on a fork bomb on a loaded machine ("unable to freeze"): it
        is tried again, then every process is killed instead (the volumes stay readable)."""
        for attempt in range(attempts):
            try:
                self.container.pause()
                return
            except APIError as exc:
                if "already paused" in str(exc):
                    return
                if "unable to freeze" not in str(exc):
                    raise SandboxError(f"cannot pause the container: {exc}") from exc
                log.warning("pause %d of %d failed (%s)", attempt + 1, attempts, exc)
                time.sleep(1.0)
        try:
            self.container.kill()
        except APIError as exc:
            raise SandboxError(f"cannot pause or kill the container: {exc}") from exc

    def archive_to(self, path: str, dest: IO[bytes], cap: int) -> None:
        """Stream the tar of `path` into `dest`; raises TooLarge past `cap` bytes."""
        try:
            chunks, _ = self.container.get_archive(path)
            _copy_capped(chunks, dest, cap)
        except NotFound as exc:
            raise FileNotFoundError(path) from exc
        except APIError as exc:
            raise SandboxError(f"cannot read {path}: {exc}") from exc

    def read_file(self, path: str, cap: int) -> bytes:
        """One regular file's bytes (FileNotFoundError for a missing file, link or directory)."""
        try:
            chunks, stat = self.container.get_archive(path)
        except NotFound as exc:
            raise FileNotFoundError(path) from exc
        except APIError as exc:
            raise SandboxError(f"cannot read {path}: {exc}") from exc
        if int(stat.get("size", 0)) > cap:
            raise TooLarge(f"{path} is {stat.get('size')} bytes (cap {cap})")
        return tarutil.extract_one(_capped(chunks, cap + 1024 * 1024))

    def put_archive_stream(self, parent: str, data: IO[bytes] | bytes) -> None:
        try:
            if not self.container.put_archive(parent, data):
                raise SandboxError(f"could not copy into {parent}")
        except (APIError, NotFound) as exc:
            raise SandboxError(f"could not copy into {parent}: {exc}") from exc


def _capped(chunks: Iterator[bytes], cap: int) -> Iterator[bytes]:
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > cap:
            raise TooLarge(f"archive exceeds {cap} bytes")
        yield chunk


def _copy_capped(chunks: Iterator[bytes], dest: IO[bytes], cap: int) -> None:
    for chunk in _capped(chunks, cap):
        dest.write(chunk)
