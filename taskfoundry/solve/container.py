"""The worker's container: the task's start-state image, the worker's uid, no network.

The container's main process is root's `sleep` (so the set-up below can run), every command
of the agent is a `docker exec` as the worker. `no-new-privileges` keeps a setuid file from
lifting the worker back to root. The submission is packed by the worker itself, so it holds
what the worker could read and nothing else (never the execute-only gold).
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

import docker

from taskfoundry.errors import SandboxError
from taskfoundry.sandbox.base import ExecResult, SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.solve.config import Isolation
from taskfoundry.solve.view import EXCLUDED, WorkerView

PROMPT_DIR = "/tf-task"
PROMPT_PATH = f"{PROMPT_DIR}/prompt.md"
AGENT_DIR = "/agent"
SETUP_TIMEOUT = 120.0


class WorkerBox(DockerSandbox):
    """A DockerSandbox whose commands run as the worker, with the task's variables set."""

    def __init__(
        self, view: WorkerView, isolation: Isolation, client: docker.DockerClient, image: str | None = None
    ) -> None:
        """`image`: another image than the view's (only the isolation tests pass one)."""
        limits = SandboxLimits(
            memory_mb=isolation.memory_mb,
            pids=isolation.pids,
            network=isolation.network,
            user=isolation.user,
        )
        hardening = {"security_opt": ["no-new-privileges"], "init": True}
        super().__init__(
            image or view.image,
            limits,
            workdir=view.workspace,
            client=client,
            labels={"taskfoundry-solve": view.task_id},
            hardening=hardening,
        )
        self.view = view
        self.isolation = isolation
        self.env = {
            "HOME": isolation.home,
            "TF_TASK_ID": view.task_id,
            "TF_KIND": view.kind,
            "TF_WORKSPACE": view.workspace,
            "TF_PROMPT": PROMPT_PATH,
        }

    def __enter__(self) -> WorkerBox:
        super().__enter__()
        return self

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
        merged = {**self.env, **(env or {})}
        return super().exec(cmd, timeout=timeout, stdin=stdin, env=merged, workdir=workdir, user=user)

    def prepare(self, agent_dir: Path | None = None) -> None:
        """As root, before the agent: the workspace and home the worker owns (the function kind's
        image has neither), the task text (root's, readable), and the external agent's files."""
        ws, user, home = shlex.quote(self.view.workspace), self.limits.user, shlex.quote(self.env["HOME"])
        self._root(
            f"mkdir -p {ws} {home} {PROMPT_DIR} && chown {user} {home}"
            f' && {{ [ -n "$(ls -A {ws})" ] || chown {user} {ws}; }}'
        )
        self.put_file(self.view.task_text.encode(), PROMPT_PATH, mode=0o444)
        if agent_dir is not None:
            self.put_dir(agent_dir, AGENT_DIR)
            self._root(f"chown -R 0:0 {AGENT_DIR} && chmod -R a+rX,go-w {AGENT_DIR}")

    def _root(self, command: str) -> None:
        res = self.exec(command, timeout=SETUP_TIMEOUT, workdir="/", user="0:0")
        if not res.ok:
            raise SandboxError(f"setting up the worker's container failed: {res.text()[-1000:]}")

    def pack_submission(self) -> bytes:
        """The workspace as a tar.gz, made by the worker (EXCLUDED left out)."""
        path = f"/tmp/tf-submission-{uuid.uuid4().hex}.tar.gz"
        excludes = " ".join(f"--exclude={shlex.quote(e)}" for e in EXCLUDED)
        command = (
            f"tar -czf {path} --ignore-failed-read --warning=no-failed-read {excludes}"
            f" -C {shlex.quote(self.view.workspace)} ."
        )
        res = self.exec(command, timeout=SETUP_TIMEOUT, workdir="/")
        if res.exit_code not in (0, 1):  # 1: a file changed or vanished while read
            raise SandboxError(f"packing the workspace failed: {res.text()[-1000:]}")
        return self.bounded_file(path, self.isolation.submission_mb * 1024 * 1024)

    def bounded_file(self, path: str, max_bytes: int) -> bytes:
        """A file the worker wrote, refused unread when over `max_bytes` (the copy lands in this
        process's memory: an agent must not be able to fill it)."""
        res = self.exec(["stat", "-c", "%s", path], timeout=SETUP_TIMEOUT, workdir="/", user="0:0")
        if not res.ok:
            raise FileNotFoundError(path)
        size = int(res.stdout.decode().strip() or 0)
        if size > max_bytes:
            raise SandboxError(f"{path} is {size} bytes, over the cap of {max_bytes}: not copied out")
        return self.get_file(path)
