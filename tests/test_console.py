"""A normal run through the embedded Prefect server is quiet: no telemetry attempt, no error
line. Telemetry is off by default, and a user's own Prefect setting is kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
