"""A normal run through the embedded Prefect server is quiet: no telemetry attempt, no error
line. Telemetry is off by default, and a user's own Prefect setting is kept."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import make_repo

CLI = "from taskfoundry.cli import main; main(prog_name='taskfoundry')"
# what the process and the server it starts see of the telemetry settings
SHOW = (
    "import os; import taskfoundry.flows; "
    "print(os.environ.get('PREFECT_SERVER_ANALYTICS_ENABLED'), os.environ.get('DO_NOT_TRACK'))"
)


def _clean_env(prefect_home: Path) -> dict[str, str]:
    """The caller's environment without any Prefect or tracking setting: a new user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_") and k != "DO_NOT_TRACK"}
    # a loaded machine can take longer than Prefect's 20 s to start the server
    return {
        **env,
        "PREFECT_HOME": str(prefect_home),
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    }


def test_normal_run_on_the_embedded_server_is_quiet(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "tasks", str(tmp_path / "out"), "--publish"],
        env=_clean_env(tmp_path / "prefect"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "0 tasks" in proc.stdout
    # the flow ran on the server this command started, and stderr holds its one line only
    assert proc.stderr == "published artifact catalog\n"
    assert (tmp_path / "prefect" / "prefect.db").is_file()


def _show(prefect_home: Path, **env: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", SHOW],
        env={**_clean_env(prefect_home), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def test_telemetry_off_by_default_and_the_users_choice_kept(tmp_path: Path) -> None:
    assert _show(tmp_path / "new") == "false 1"
    assert _show(tmp_path / "new", PREFECT_SERVER_ANALYTICS_ENABLED="true") == "true None"
    assert _show(tmp_path / "new", DO_NOT_TRACK="0") == "false 0"
    profile = tmp_path / "profiled"
    profile.mkdir()
    (profile / "profiles.toml").write_text(
        'active = "mine"\n[profiles.mine]\nPREFECT_SERVER_ANALYTICS_ENABLED = "true"\n'
    )
    assert _show(profile) == "None None"  # the profile's value stands; no profile is rewritten
    assert "true" in (profile / "profiles.toml").read_text()


OWN_SERVER = re.compile(r"Prefect server of this command on http://127\.0\.0\.1:(\d+)/api")


def _failed_build(env: dict[str, str], repo: Path, out: Path) -> str:
    """`build REPO` (a repository with nothing to build: a bad path is refused before any
    server, issue 59) as a user runs it: asserts the one line it prints; the run log's text."""
    make_repo(repo, {"README.md": "just words\n"})
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "build", str(repo), "--out", str(out), "--no-progress"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr
    (log,) = (out / "work" / "logs").iterdir()
    # no telemetry, no connection error: the one line
    details = re.escape(f"[details: {log}]")
    line = rf"taskfoundry: build stage failed: .*no build system detected.* {details}\n"
    assert re.fullmatch(line, proc.stderr), proc.stderr
    return log.read_text()


def test_build_runs_on_the_server_it_started_and_stops_it(tmp_path: Path) -> None:
    home = tmp_path / "prefect"
    text = _failed_build(_clean_env(home), tmp_path / "r", tmp_path / "out")
    match = OWN_SERVER.search(text)
    assert match, text
    with pytest.raises(OSError):  # stopped with the command
        socket.create_connection(("127.0.0.1", int(match[1])), timeout=5).close()
    # the flow and its source task ran on that server: their runs are in its database
    with contextlib.closing(sqlite3.connect(home / "prefect.db")) as db:
        flows = db.execute(
            "select r.state_type, r.parameters, r.name from flow_run r join flow f on f.id = r.flow_id "
            "where f.name = 'build-task'"
        ).fetchall()
        tasks = db.execute("select state_type from task_run where name like 'build-%'").fetchall()
    assert [(state, json.loads(params)["source"], name) for state, params, name in flows] == [
        ("FAILED", str(tmp_path / "r"), "build r")  # named after its source, not at random
    ]
    assert tasks == [("FAILED",)]


def test_a_server_named_by_the_profile_is_used_instead(tmp_path: Path, prefect_harness: None) -> None:
    from prefect import get_client
    from prefect.client.schemas.objects import StateType
    from prefect.settings import PREFECT_API_URL

    home = tmp_path / "prefect"
    home.mkdir()
    (home / "profiles.toml").write_text(
        f'active = "mine"\n[profiles.mine]\nPREFECT_API_URL = "{PREFECT_API_URL.value()}"\n'
    )
    text = _failed_build(_clean_env(home), tmp_path / "r", tmp_path / "out")
    assert not OWN_SERVER.search(text)  # the one it started on the chance was stopped, unused
    assert re.search(r"Beginning flow run '[^']+' for flow 'build-task'", text), text
    with get_client(sync_client=True) as client:  # the session's server: the profile's
        runs = client.read_flow_runs(limit=200)
    states = [r.state_type for r in runs if r.parameters.get("source") == str(tmp_path / "r")]
    assert states == [StateType.FAILED]


def test_the_embedded_server_env_is_what_prefect_gives_its_own() -> None:
    """cli_server copies the environment Prefect's SubprocessASGIServer starts its temporary
    server with (it must not import Prefect first): a Prefect upgrade that changes it fails here."""
    import ast
    import inspect

    from prefect.server.api.server import SubprocessASGIServer

    from taskfoundry.cli_server import SERVER_ENV

    source = textwrap.dedent(inspect.getsource(SubprocessASGIServer._run_uvicorn_command))
    (found,) = [
        ast.literal_eval(node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
    ]
    assert found == SERVER_ENV
