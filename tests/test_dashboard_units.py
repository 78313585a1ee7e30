"""Which server a command reports to: a running dashboard's, found by its marker in Prefect's home,
unless the environment names one; a marker whose server does not answer is passed over."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from taskfoundry.dashboard import MARKER, point_at_dashboard, running


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self.send_response(200 if self.path == "/api/health" else 404)
        self.end_headers()
        self.wfile.write(b"true")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def answering() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _mark(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / MARKER).write_text(json.dumps({"api_url": f"{url}/api", "ui_url": url, "pid": 1}))


def test_a_running_dashboard_is_found_and_used(
    tmp_path: Path, answering: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    for name in ("PREFECT_API_URL", "PREFECT_UI_URL"):  # restored after the test, set or not
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    assert running() is None and point_at_dashboard() is None  # no marker
    _mark(tmp_path, answering)
    assert point_at_dashboard() == answering
    import os

    assert os.environ["PREFECT_API_URL"] == f"{answering}/api" and os.environ["PREFECT_UI_URL"] == answering


def test_a_named_server_wins_and_a_stale_marker_is_passed_over(
    tmp_path: Path, answering: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    _mark(tmp_path, answering)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    assert point_at_dashboard() is None  # the user's server stays
    monkeypatch.delenv("PREFECT_API_URL")
    _mark(tmp_path, "http://127.0.0.1:9")  # nothing answers there
    assert running() is None and point_at_dashboard() is None
    (tmp_path / MARKER).write_text("not json")
    assert running() is None
