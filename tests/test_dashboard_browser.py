"""`taskfoundry dashboard` seen in a real browser: a real build on the embedded server first (its
run lands in Prefect's home), then the dashboard on that home, a later command reporting to it,
and headless Chromium finding the build's flow run and its artifacts on the dashboard's pages."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from test_catalog_browser import _chromium, _page_text
from test_flows_docker import FAST, TINY

from taskfoundry.sandbox.local import stop_group

from conftest import free_port, make_repo

pytestmark = [pytest.mark.docker, pytest.mark.browser, pytest.mark.slow]
BIN = Path(sys.executable).parent


def _env(home: Path) -> dict[str, str]:
    """A fresh Prefect home and no server named: the commands find their own, or the dashboard."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return env | {"PREFECT_HOME": str(home)}


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the dashboard printed no address"
    return proc.stdout.readline()


def _dom(chromium: str, page: str, profile: Path, shot: Path | None = None) -> str:
    browser = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"]
    browser += ["--virtual-time-budget=30000", f"--user-data-dir={profile}"]
    if shot is not None:
        subprocess.run([*browser, f"--screenshot={shot}", page], capture_output=True, timeout=180, check=True)
    dumped = subprocess.run([*browser, "--dump-dom", page], capture_output=True, text=True, timeout=180)
    return _page_text(dumped.stdout)


def test_the_dashboard_shows_past_runs_and_later_runs_report_to_it(base_image: str, tmp_path: Path) -> None:
    chromium = _chromium()
    home, out = tmp_path / "prefect-home", tmp_path / "out"
    env = _env(home)
    repo = make_repo(tmp_path / "dashtiny", TINY)
    built = subprocess.run(
        [str(BIN / "taskfoundry"), "build", str(repo), "--out", str(out), *FAST],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    port = free_port()
    dashboard = subprocess.Popen(
        [str(BIN / "taskfoundry"), "dashboard", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        line = _first_line(dashboard, 240)
        assert line.startswith(f"dashboard: {url}"), line
        assert (home / "taskfoundry-dashboard.json").is_file()
        api = httpx.Client(base_url=f"{url}/api", timeout=30)
        (run,) = api.post("/flow_runs/filter", json={"limit": 5}).json()  # the build, before the dashboard
        artifacts = api.post("/artifacts/filter", json={"limit": 50}).json()
        table = next(a for a in artifacts if a["key"].startswith("task-") and a["type"] == "table")
        assert table["flow_run_id"] == run["id"]  # the build's own artifact

        # a later command, told nothing, reports to the dashboard
        later = subprocess.run(
            [str(BIN / "taskfoundry"), "tasks", str(out), "--publish"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert later.returncode == 0, later.stderr[-3000:]
        runs = api.post("/flow_runs/filter", json={"limit": 5}).json()
        assert len(runs) == 2 and {r["id"] for r in runs} > {run["id"]}
        assert "catalog" in {a["key"] for a in api.post("/artifacts/filter", json={"limit": 50}).json()}

        shot = tmp_path / "flow-run.png"
        text = _dom(chromium, f"{url}/runs/flow-run/{run['id']}", tmp_path / "profile", shot)
        assert run["name"] in text, text[:3000]
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
        page = _dom(chromium, f"{url}/artifacts/artifact/{table['id']}", tmp_path / "profile")
        (task_dir,) = (out / "tasks").iterdir()
        assert table["key"] in page and task_dir.name in page and "tests kept" in page, page[:3000]
    finally:
        stop_group(dashboard, signal.SIGINT, grace=60)
    deadline = time.monotonic() + 10
    while (home / "taskfoundry-dashboard.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not (home / "taskfoundry-dashboard.json").exists()  # gone with its server
