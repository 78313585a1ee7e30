"""A Sandbox that runs commands as host subprocesses in a directory: for tests and demos.

Sandbox paths map under `root` (`/work/x` -> `<root>/work/x`) for files and working
directories. Commands themselves run on the host: an absolute path inside a command is a host
path, so commands should use relative paths (or `$SANDBOX_ROOT`). Only the timeout and the
output cap are enforced: no isolation, no network or memory limits, no user switching.
"""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from taskfoundry.errors import SandboxError
from taskfoundry.sandbox.base import ExecResult, SandboxLimits

log = logging.getLogger(__name__)

# Seconds to wait for output readers once the process group is gone.
_READER_GRACE = 5.0


class LocalSandbox:
    """Runs commands with `subprocess` under `root` (a fresh temp dir when None)."""

    def __init__(self, root: Path | None = None, limits: SandboxLimits | None = None) -> None:
        # model_validate: mypy (without the pydantic plugin) misreads Field(positional default)
        self.limits = limits or SandboxLimits.model_validate({})
        self._given_root = root
        self._root: Path | None = None
        self._tempdir: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> LocalSandbox:
        if self._given_root is None:
            self._tempdir = tempfile.TemporaryDirectory(prefix="tf-sandbox-")
            self._root = Path(self._tempdir.name)
        else:
            self._root = self._given_root.resolve()
            self._root.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._tempdir is not None:
            self._tempdir.cleanup()
        self._tempdir = None
        self._root = None

    @property
    def root(self) -> Path:
        if self._root is None:
            raise SandboxError("sandbox used outside its `with` block")
        return self._root

    def host_path(self, path: str) -> Path:
        """Where the sandbox path `path` lives on the host (`..` cannot climb out of root)."""
        normal = posixpath.normpath(posixpath.join("/", path))
        return self.root / normal.lstrip("/")

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
        argv = ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        cwd = self.host_path(workdir or "/")
        if not cwd.is_dir():
            raise SandboxError(f"working directory {workdir} does not exist in the sandbox")
        if user is not None:
            log.debug("LocalSandbox ignores user=%s", user)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=self._env(env),
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start {argv[0]}: {exc}") from exc
        return self._wait(proc, stdin, timeout, start)

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        """A small environment: the host's PATH, but none of its secrets."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "LANG": "C.UTF-8",
            "SANDBOX_ROOT": str(self.root),
            "TMPDIR": str(self.root),
        }
        env.update(extra or {})
        return env

    def _wait(
        self, proc: subprocess.Popen[bytes], stdin: bytes | None, timeout: float, start: float
    ) -> ExecResult:
        assert proc.stdout is not None and proc.stderr is not None
        out, err = (
            _CappedReader(proc.stdout, self.limits.output_bytes),
            _CappedReader(proc.stderr, self.limits.output_bytes),
        )
        if stdin is not None and proc.stdin is not None:
            threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(proc.pid)  # the timed-out command, or what it left running in the background
        code = proc.wait()
        out.join(_READER_GRACE)
        err.join(_READER_GRACE)
        exit_code = 128 - code if code < 0 else code  # killed by signal N -> 128 + N
        truncated = out.truncated or err.truncated
        return ExecResult(exit_code, out.data(), err.data(), timed_out, truncated, time.monotonic() - start)

    # files ---------------------------------------------------------------
    def put_dir(self, src: Path, dest: str) -> None:
        shutil.copytree(src, self.host_path(dest), dirs_exist_ok=True, symlinks=True)

    def put_file(self, data: bytes, dest: str, mode: int = 0o644) -> None:
        target = self.host_path(dest)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(mode)

    def get_file(self, path: str) -> bytes:
        source = self.host_path(path)
        if not source.is_file():
            raise FileNotFoundError(path)
        return source.read_bytes()

    def get_dir(self, path: str, dest: Path) -> None:
        source = self.host_path(path)
        if not source.is_dir():
            raise FileNotFoundError(path)
        shutil.copytree(source, dest, dirs_exist_ok=True, symlinks=True)


class _CappedReader:
    """Reads a pipe in a thread, keeping at most `cap` bytes, then closes it (like `head -c`)."""

    def __init__(self, pipe: IO[bytes], cap: int) -> None:
        self._pipe = pipe
        self._cap = cap
        self._buf = bytearray()
        self.truncated = False
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while chunk := os.read(self._pipe.fileno(), 65536):
                room = self._cap - len(self._buf)
                self._buf += chunk[: max(room, 0)]
                if len(chunk) > room:
                    self.truncated = True
                    break  # the writer now gets EPIPE / SIGPIPE
        except (OSError, ValueError):
            log.debug("output pipe closed while reading", exc_info=True)
        finally:
            self._pipe.close()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def data(self) -> bytes:
        return bytes(self._buf)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError):
        log.debug("command did not read all of its stdin")
    finally:
        try:
            pipe.close()
        except OSError:
            log.debug("closing stdin failed", exc_info=True)


def stop_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, grace: float = 30) -> None:
    """Stop a process started with `start_new_session=True` and all it started: `sig` to the
    group, then SIGKILL if it has not ended within `grace` seconds."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.wait()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
