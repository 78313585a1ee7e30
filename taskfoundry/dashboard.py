"""`taskfoundry dashboard`: Prefect's server with its UI, on the database every command's own
server writes (Prefect's home, `PREFECT_HOME`, `~/.prefect` by default), so past runs are there.

While it runs, a marker in Prefect's home (`taskfoundry-dashboard.json`: its API and UI
addresses, its pid) tells every later taskfoundry command to report to it instead of starting
a server of its own (`point_at_dashboard`, before Prefect is imported). A marker whose server no
longer answers is ignored.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from taskfoundry import atomic
from taskfoundry.errors import TaskfoundryError

MARKER = "taskfoundry-dashboard.json"
HEALTH_TIMEOUT = 1.0  # seconds a marker's server has to answer before it is taken as gone
START_TIMEOUT = 180.0  # seconds the server has to answer after it starts (it migrates the database)
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy


class DashboardError(TaskfoundryError):
    """The dashboard's server did not start."""


def prefect_home() -> Path:
    return Path(os.environ.get("PREFECT_HOME") or "~/.prefect").expanduser()


def marker() -> Path:
    return prefect_home() / MARKER


def _answers(api_url: str, timeout: float) -> bool:
    try:
        with DIRECT.open(f"{api_url}/health", timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def running() -> dict[str, str] | None:
    """The running dashboard's addresses (`api_url`, `ui_url`), or None."""
    try:
        found = json.loads(marker().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("api_url"), str):
        return None
    return found if _answers(found["api_url"], HEALTH_TIMEOUT) else None


def point_at_dashboard() -> str | None:
    """Point this process (and those it starts) at a running dashboard, unless the environment
    names a server already; its UI address, or None."""
    if os.environ.get("PREFECT_API_URL"):
        return None
    found = running()
    if found is None:
        return None
    os.environ["PREFECT_API_URL"] = found["api_url"]
    os.environ["PREFECT_UI_URL"] = found["ui_url"]
    return found["ui_url"]


def server_env(host: str, port: int) -> dict[str, str]:
    """The environment of `prefect server start` here: its UI told where its API is, no telemetry
    unless the user chose, and never another server's address."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_UI_API_URL"] = f"http://{host}:{port}/api"
    env.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    env.setdefault("DO_NOT_TRACK", "1")
    return env


def serve_dashboard(host: str, port: int, echo: Callable[[str], None] = print) -> int:
    """Run the server until it ends or a signal stops it; its exit status."""
    if (found := running()) is not None:
        raise DashboardError(f"a dashboard already runs at {found['ui_url']} (its marker: {marker()})")
    url = f"http://{host}:{port}"
    argv = [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)]
    log = prefect_home() / "dashboard.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, _exit)  # stopped as a service is: the server and marker go too
    with log.open("ab") as sink:
        proc = subprocess.Popen(argv, env=server_env(host, port), stdout=sink, stderr=subprocess.STDOUT)
    try:
        _wait(proc, f"{url}/api", log)
        atomic.write_json(marker(), {"api_url": f"{url}/api", "ui_url": url, "pid": os.getpid()})
        echo(f"dashboard: {url}  (Prefect's UI on {prefect_home()}; its log {log}; Ctrl-C stops it)")
        return proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(proc)
        _forget()


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _wait(proc: subprocess.Popen[bytes], api_url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not _answers(api_url, 2.0):
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise DashboardError(f"the Prefect server exited with code {proc.returncode}:\n{tail}")
        if time.monotonic() > deadline:
            raise DashboardError(
                f"the Prefect server did not answer within {START_TIMEOUT:.0f} s (log: {log})"
            )
        time.sleep(0.5)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # as Ctrl-C in its terminal: it shuts down cleanly
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _forget() -> None:
    """Remove the marker if it is this process's."""
    try:
        if json.loads(marker().read_text()).get("pid") == os.getpid():
            marker().unlink()
    except (OSError, ValueError, AttributeError):
        pass
