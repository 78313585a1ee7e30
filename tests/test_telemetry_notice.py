"""Prefect's first-run telemetry notice never reaches an author's terminal: a real interactive
terminal (a pty), a fresh Prefect home, Prefect really imported; and without taskfoundry's
defence first, the same run shows the notice (so the check can see it)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from taskfoundry.prefect_env import USER_CHOICES

NOTICE = b"Prefect collects anonymous usage data"
CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "BUILDKITE", "CI_NAME", "TF_BUILD")
ROOT = Path(__file__).resolve().parents[1]


def _in_a_terminal(code: str, home: Path) -> bytes:
    """Run `code` in a new Python whose stdout and stderr are a terminal; what it printed."""
    env = {k: v for k, v in os.environ.items() if k not in (*USER_CHOICES, *CI_VARIABLES)}
    env |= {"PREFECT_HOME": str(home), "PYTHONPATH": str(ROOT)}
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=follower, stderr=follower, env=env)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal's other end closed: the program is gone
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert proc.wait(timeout=120) == 0, out
    return out


@pytest.mark.parametrize("defence", [True, False], ids=["taskfoundry first", "prefect alone"])
def test_no_telemetry_notice_on_a_terminal(tmp_path: Path, defence: bool) -> None:
    first = "import taskfoundry.cli; " if defence else ""
    out = _in_a_terminal(first + "import prefect.flows", tmp_path / "prefect-home")
    assert (NOTICE in out) is not defence, out


def test_a_users_own_choice_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from taskfoundry.prefect_env import before_prefect

    monkeypatch.setitem(sys.modules, "prefect", sys.modules.get("prefect") or object())  # type: ignore[arg-type]
    monkeypatch.setenv("DO_NOT_TRACK", "")  # restored after the test, set or not
    monkeypatch.delenv("DO_NOT_TRACK")
    before_prefect()  # Prefect is imported already: too late, nothing set
    assert "DO_NOT_TRACK" not in os.environ
    monkeypatch.delitem(sys.modules, "prefect")
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "true")
    before_prefect()  # the user chose
    assert "DO_NOT_TRACK" not in os.environ
    monkeypatch.delenv("PREFECT_SERVER_ANALYTICS_ENABLED")
    before_prefect()
    assert os.environ["DO_NOT_TRACK"] == "1"
