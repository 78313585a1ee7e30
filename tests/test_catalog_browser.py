"""The catalog on the dashboard, seen in a real browser: `prefect server start`, the catalog
published by `taskfoundry tasks --publish`, the artifact's page rendered by headless Chromium.

Chromium comes from Debian's packages: `make test` installs it, and so does this module when
it is missing and it may (root with apt-get); otherwise the test skips, except in CI.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from taskfoundry.sandbox.local import stop_group

from catalog_support import sample_out

pytestmark = pytest.mark.browser
BIN = Path(sys.executable).parent


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "check": False}
        subprocess.run(["apt-get", "update", "-qq"], timeout=600, **quiet)  # type: ignore[call-overload]
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], timeout=1200, **quiet)  # type: ignore[call-overload]
        found = shutil.which("chromium")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Chromium is not installed and could not be (apt-get install chromium)")
        pytest.skip("no Chromium (apt-get install chromium)")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A real `prefect server start` on a free port; its URL and the environment of its clients."""
    home = tmp_path_factory.mktemp("prefect-home")
    url = f"http://127.0.0.1:{_free_port()}"
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": f"{url}/api",
        "PREFECT_UI_API_URL": f"{url}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    log = (home / "server.log").open("w")
    port = url.rsplit(":", 1)[1]
    proc = subprocess.Popen(
        [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", port],
        env={k: v for k, v in env.items() if k != "PREFECT_API_URL"},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (home / "server.log").read_text()[-3000:]
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "prefect server did not answer within 3 minutes"
            time.sleep(1)
        yield url, env
    finally:
        stop_group(proc)
        log.close()


def _page_text(dom: str) -> str:
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def test_the_catalog_table_is_on_its_dashboard_page(
    server: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    chromium = _chromium()
    url, env = server
    out = sample_out(tmp_path / "out")
    published = subprocess.run(
        [str(BIN / "taskfoundry"), "tasks", str(out), "--publish", "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert published.returncode == 0, published.stderr
    assert "published artifact catalog" in published.stderr
    found = httpx.post(
        f"{url}/api/artifacts/filter",
        json={"artifacts": {"key": {"any_": ["catalog"]}}, "sort": "CREATED_DESC", "limit": 1},
        timeout=30,
    ).json()
    page = f"{url}/artifacts/artifact/{found[0]['id']}"

    browser = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"]
    browser += ["--virtual-time-budget=30000", f"--user-data-dir={tmp_path / 'profile'}"]
    shot = tmp_path / "catalog.png"
    subprocess.run([*browser, f"--screenshot={shot}", page], capture_output=True, timeout=180, check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    dom = subprocess.run(
        [*browser, "--dump-dom", page], capture_output=True, text=True, timeout=180, check=True
    )
    text = _page_text(dom.stdout)

    header = "task kind language difficulty tests recall coverage mutation score gold"
    assert header in text, text[:3000]
    for row in (
        "acme__alpha.aaaaaaa program c easy 3 0 50.0% n/a sealed",
        "acme__gamma.ccccccc function go hard 3 0 50.0% 75.0% n/a",
        "zeta__eps.eeeeeee program rust easy 3 0 90.0% n/a instrumentable",
    ):
        assert row in text, text[:3000]
    assert "5 tasks, 17 tests" in text  # the artifact's description
