"""A Sandbox backed by one Docker container, with timeouts docker-py lacks."""

from __future__ import annotations

import logging
import os
import shlex
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import docker
from docker.errors import APIError, DockerException, NotFound
from docker.models.containers import Container

from taskfoundry.errors import SandboxError
from taskfoundry.sandbox import tarutil
from taskfoundry.sandbox.base import ExecResult, SandboxLimits

log = logging.getLogger(__name__)

# Seconds the host waits past the in-container `timeout` before declaring the exec lost.
_HOST_GRACE = 15.0


def docker_client() -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (or the local socket)."""
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except DockerException as exc:
        raise SandboxError(f"no Docker engine reachable: {exc}") from exc
    return client


RUN_LABEL_ENV = "TASKFOUNDRY_RUN_LABEL"  # set by a caller that may have to clean up after a kill


def run_label() -> dict[str, str]:
    """`taskfoundry.run=<value>` when the environment names a run: a harness that kills this
    process (a time limit) removes the run's containers by it."""
    value = os.environ.get(RUN_LABEL_ENV)
    return {"taskfoundry.run": value} if value else {}


class DockerSandbox:
    """Runs commands in a long-lived container started from `image`.

    The container's main process only sleeps; each command is a `docker exec`
    wrapped in coreutils `timeout`, with output capped on the host side.
    """

    def __init__(
        self,
        image: str,
        limits: SandboxLimits | None = None,
        *,
        workdir: str = "/",
        client: docker.DockerClient | None = None,
        labels: Mapping[str, str] | None = None,
        hardening: Mapping[str, Any] | None = None,
        tmpfs: Mapping[str, str] | None = None,
    ) -> None:
        """`hardening`: more `containers.run` options (security_opt, cap_drop), to try a
        worker's view of an image under the flags a careful harness would add. `tmpfs`:
        path -> mount options of in-memory file systems (on fuse-overlayfs every file
        operation in the image's own tree is a round trip to a user-space daemon)."""
        self.image = image
        self._hardening = dict(hardening or {})
        self.limits = limits or SandboxLimits()
        self.workdir = workdir
        self._client = client
        self._labels = dict(labels or {})
        self._tmpfs = dict(tmpfs or {})
        self._container: Container | None = None

    # lifecycle -----------------------------------------------------------
    def __enter__(self) -> DockerSandbox:
        client = self._client or docker_client()
        self._client = client
        try:
            client.images.get(self.image)  # containers.run would try to pull a missing image
        except NotFound as exc:
            raise SandboxError(f"image {self.image} does not exist (nothing can be pulled)") from exc
        try:
            self._container = client.containers.run(
                self.image,
                ["sleep", "infinity"],
                detach=True,
                network_mode=None if self.limits.network else "none",
                mem_limit=f"{self.limits.memory_mb}m",
                memswap_limit=f"{self.limits.memory_mb}m",
                pids_limit=self.limits.pids,
                working_dir=self.workdir,
                labels={"taskfoundry": "sandbox", **run_label(), **self._labels},
                user="0:0",
                tmpfs=self._tmpfs,
                **self._hardening,
            )
        except (APIError, DockerException) as exc:
            raise SandboxError(f"cannot start a container from {self.image}: {exc}") from exc
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._container is not None:
            try:
                self._container.remove(force=True)
            except NotFound:
                pass
            except APIError as err:
                log.warning("could not remove container %s: %s", self._container.id, err)
            self._container = None

    @property
    def container(self) -> Container:
        if self._container is None:
            raise SandboxError("sandbox used outside its `with` block")
        return self._container

    # commands ------------------------------------------------------------
    def exec(
        self,
        cmd: Sequence[str] | str,
        *,
        timeout: float,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        user: str | None = None,
    ) -> ExecResult:
        shell = cmd if isinstance(cmd, str) else shlex.join(cmd)
        if stdin is not None:
            path = f"/tmp/.tf-stdin-{uuid.uuid4().hex}"
            self.put_file(stdin, path, mode=0o644)
            # the newline before ")" lets a command end in a heredoc
            shell = f"( {shell}\n) < {path}; __rc=$?; rm -f {path}; exit $__rc"
        else:
            shell = f"( {shell}\n) < /dev/null"
        wrapped = ["timeout", "-k", "2", f"{timeout:g}", "sh", "-c", shell]
        return self._run(wrapped, timeout, env, workdir or self.workdir, user or self.limits.user)

    def _run(
        self, argv: list[str], timeout: float, env: Mapping[str, str] | None, workdir: str, user: str
    ) -> ExecResult:
        api = self.container.client.api
        start = time.monotonic()
        try:
            exec_id = api.exec_create(
                self.container.id, argv, environment=dict(env or {}), workdir=workdir, user=user
            )["Id"]
            stream = api.exec_start(exec_id, stream=True, demux=True)
        except (APIError, DockerException) as exc:
            raise SandboxError(f"docker exec failed: {exc}") from exc
        out, err, truncated, lost = self._collect(stream, timeout + _HOST_GRACE)
        if lost:
            raise SandboxError(f"exec did not finish {_HOST_GRACE:g}s after its timeout")
        info = api.exec_inspect(exec_id)
        code = info.get("ExitCode")
        if code is None:  # still running: the stream was closed on an output flood
            code = -1
        timed_out = code in (124, 137) and time.monotonic() - start >= timeout
        return ExecResult(code, out, err, timed_out, truncated, time.monotonic() - start)

    def _collect(self, stream: Iterator[Any], deadline: float) -> tuple[bytes, bytes, bool, bool]:
        """Read a demuxed exec stream with an output cap and a host-side deadline."""
        cap = self.limits.output_bytes
        parts: dict[int, bytearray] = {1: bytearray(), 2: bytearray()}
        state = {"truncated": False, "done": False}

        def pump() -> None:
            for chunk in stream:
                for fd, data in ((1, chunk[0]), (2, chunk[1])):
                    if not data:
                        continue
                    room = cap - len(parts[fd])
                    parts[fd] += data[: max(room, 0)]
                    if len(data) > room:
                        state["truncated"] = True
                if state["truncated"]:
                    break  # closing the stream gives the writer EPIPE, like `| head -c`
            state["done"] = True

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        reader.join(deadline)
        _close(stream)
        return bytes(parts[1]), bytes(parts[2]), state["truncated"], not state["done"]

    # files ---------------------------------------------------------------
    def put_dir(self, src: Path, dest: str) -> None:
        parent, name = dest.rstrip("/").rsplit("/", 1)
        self._mkdir(parent or "/")
        self._put_archive(parent or "/", tarutil.tar_dir(src, name))

    def put_file(self, data: bytes, dest: str, mode: int = 0o644) -> None:
        parent, name = dest.rsplit("/", 1)
        self._put_archive(parent or "/", tarutil.tar_file(data, name, mode))

    def get_file(self, path: str) -> bytes:
        try:
            chunks, _ = self.container.get_archive(path)
            return tarutil.extract_one(chunks)
        except NotFound as exc:
            raise FileNotFoundError(path) from exc

    def get_dir(self, path: str, dest: Path) -> None:
        try:
            chunks, _ = self.container.get_archive(path.rstrip("/"))
        except NotFound as exc:
            raise FileNotFoundError(path) from exc
        tarutil.extract_all(chunks, dest)

    def _mkdir(self, path: str) -> None:
        res = self._run(["mkdir", "-p", path], 60, None, "/", "0:0")
        if res.exit_code != 0:
            raise SandboxError(f"mkdir {path} failed: {res.text()}")

    def _put_archive(self, parent: str, data: bytes) -> None:
        try:
            if not self.container.put_archive(parent, data):
                raise SandboxError(f"could not copy into {parent}")
        except (APIError, NotFound) as exc:
            raise SandboxError(f"could not copy into {parent}: {exc}") from exc


def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # noqa: BLE001 - best effort on an already broken stream
            log.debug("closing exec stream failed", exc_info=True)
