"""The embedded Prefect server of `build`, `build-many` and `refresh`, started before Prefect is
imported, so the server's start-up (seconds: it imports Prefect's whole server) overlaps the
command's own imports instead of following them.

With no `PREFECT_API_URL`, Prefect's client starts the same server itself at the first flow run
(`prefect.server.api.server.SubprocessASGIServer`); importing that class alone costs the command
seconds. Here the command binds a loopback socket (so the address is known at once and no port
is raced for), hands it to `python -m taskfoundry.cli_server FD` (uvicorn serving Prefect's
`create_app`, with the environment Prefect gives its own temporary server), and once Prefect's
settings are loaded and name no other server, points `PREFECT_API_URL` at it for the rest of the
command: the flows run on it as they would on Prefect's, with the real engine and database.

The server runs in its own session, so a Ctrl-C reaches the command alone: Prefect records the
run as crashed on the still running server, and the command then stops it. If the command dies
without stopping it, the server's standard input (a pipe from the command) reaches its end and
the server shuts itself down.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from taskfoundry.errors import TaskfoundryError
from taskfoundry.prefect_env import OWN_SERVER_ENV

log = logging.getLogger(__name__)
# Prefect's own 20 s is missed on a busy 2-core machine (a build failed at 20 s under a test run's
# load, its server about to answer): waiting longer costs nothing, `wait` returns once it answers
STARTUP_FLOOR = 120.0

# what Prefect's SubprocessASGIServer sets for its temporary server: no UI, ephemeral services
SERVER_ENV = {"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
STOP_TIMEOUT = 5.0  # seconds a stopped server has to shut down before it is killed (Prefect's)
DRAIN_TIMEOUT = 10.0  # seconds the run logs and events still queued have to reach the server
PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy


class PrefectServerError(TaskfoundryError):
    """The embedded Prefect server did not start: its process ended, or it did not answer in time."""


class EmbeddedServer:
    """A Prefect server process on a loopback socket bound here; `stop` ends it."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        with listener:  # the server's copy stays open: a request waits in its backlog meanwhile
            self.port: int = listener.getsockname()[1]
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(listener.fileno())],
                pass_fds=[listener.fileno()],
                stdin=subprocess.PIPE,  # its end tells the server this command is gone
                env={**os.environ, **SERVER_ENV, "PYTHONPATH": _pythonpath()},
                start_new_session=True,
            )

    def age(self) -> float:
        return time.monotonic() - self.started

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def wait(self, timeout: float) -> None:
        """Return once the server answers its health check: one request, held in the socket's
        backlog until the server serves (so no polling interval is lost)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if self.process.poll() is not None:
                raise PrefectServerError(f"the Prefect server exited with code {self.process.returncode}")
            try:
                with DIRECT.open(f"{self.api_url}/health", timeout=left) as response:
                    if response.status == 200:
                        return
            except OSError:  # reset or refused (it is exiting), or an error status
                time.sleep(0.05)
        raise PrefectServerError(f"the Prefect server did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdin is not None:
            self.process.stdin.close()


def _pythonpath() -> str:
    """The command's PYTHONPATH, and first the folder this taskfoundry came from when the server
    would not find it there (the folder of a script or of `-c`, or one added at run time)."""
    inherited = os.environ.get("PYTHONPATH", "")
    if PACKAGE_ROOT in {os.path.realpath(p) for p in sys.path[1:] if p}:  # PYTHONPATH or site
        return inherited
    return os.pathsep.join(p for p in (PACKAGE_ROOT, inherited) if p)


def _api_configured() -> bool:
    """Prefect's settings name a server (or forbid a temporary one): nothing to start."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    return bool(PREFECT_API_URL.value()) or not PREFECT_SERVER_EPHEMERAL_ENABLED.value()


def _may_be_needed() -> bool:
    """Before Prefect is imported only the environment can say a server is configured (a
    profile or prefect.toml is read with Prefect: `adopt` checks again)."""
    if "prefect.context" in sys.modules:  # imported already (a test, say): ask it now
        return not _api_configured()
    return not os.environ.get("PREFECT_API_URL")


@contextlib.contextmanager
def embedded_server() -> Iterator[Callable[[], None]]:
    """Start the server now; yields `ready`, to call after the command's imports and before its
    first flow run: it keeps the server if Prefect's settings name none other (pointing
    `PREFECT_API_URL` at it, in this process and the ones it starts) and waits for it. At the
    end the server is stopped and the environment restored."""
    if not _may_be_needed():
        yield lambda: None
        return
    server = EmbeddedServer()
    set_here: dict[str, str] = {}  # the environment variables `ready` set

    def ready() -> None:
        from prefect.context import refresh_global_settings_context
        from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, get_current_settings

        if set_here or server.process.poll() is not None:
            return
        if _api_configured():
            server.stop()
            return
        set_here["PREFECT_API_URL"] = server.api_url
        set_here[OWN_SERVER_ENV] = server.api_url  # flows.limits: no run but this one holds a slot on it
        if get_current_settings().ui_url is None:  # it serves no UI: no `View at` link to one
            set_here["PREFECT_UI_URL"] = ""
        os.environ.update(set_here)
        refresh_global_settings_context()  # the settings every thread falls back to
        server.wait(max(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value(), STARTUP_FLOOR))
        log.info(
            "Prefect server of this command on %s, up %.1f s after it started", server.api_url, server.age()
        )

    try:
        yield ready
    finally:
        if set_here:
            _drain_workers()
        server.stop()
        if set_here:
            from prefect.context import refresh_global_settings_context

            for name in set_here:
                os.environ.pop(name, None)
            refresh_global_settings_context()


def _drain_workers() -> None:
    """Send the run logs and events Prefect still holds while the server is up (at exit, after
    it stopped, they would fail: `All connection attempts failed`), as Prefect's test harness
    does before it stops its server."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        worker.drain_all(timeout=DRAIN_TIMEOUT)


def serve(fd: int) -> None:
    """The server process: Prefect's API app on the socket `fd`, until stopped or its standard
    input ends."""
    import uvicorn
    from prefect.context import refresh_global_settings_context

    from taskfoundry.flows.defaults import apply_prefect_defaults

    apply_prefect_defaults()  # no telemetry, unless the user chose
    refresh_global_settings_context()
    config = uvicorn.Config(
        "prefect.server.api.server:create_app", factory=True, log_level="error", lifespan="on"
    )
    server = uvicorn.Server(config)

    def watch() -> None:
        sys.stdin.buffer.read()  # returns at its end: the command is gone, however it ended
        server.should_exit = True

    threading.Thread(target=watch, name="command-watch", daemon=True).start()
    server.run(sockets=[socket.socket(fileno=fd)])


if __name__ == "__main__":
    serve(int(sys.argv[1]))
