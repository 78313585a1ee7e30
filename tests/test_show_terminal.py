"""`taskfoundry show` renders for a terminal (issue 59): on a tty no raw markdown, through a
pipe the markdown as it is (what a script or a file gets)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from catalog_support import write_task

CLI = "from taskfoundry.cli import main; main()"


def _on_a_terminal(args: list[str]) -> str:
    """What the command prints on a pseudo-terminal 100 columns wide."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-c", CLI, *args], stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the command ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=120) == 0, b"".join(chunks)
    os.close(leader)
    return b"".join(chunks).decode()


def test_show_draws_the_summary_on_a_terminal_and_keeps_markdown_for_a_pipe(tmp_path: Path) -> None:
    task_dir = write_task(tmp_path / "tasks", "acme__tool.abcdef1", tests=7)
    piped = subprocess.run(
        [sys.executable, "-c", CLI, "show", str(task_dir)], capture_output=True, text=True, check=True
    )
    assert piped.stdout.startswith("# acme__tool.abcdef1") and "**7 kept**" in piped.stdout
    drawn = _on_a_terminal(["show", str(task_dir)])
    assert "acme__tool.abcdef1" in drawn and "7 kept" in drawn
    assert "**" not in drawn and "# acme" not in drawn and "|---" not in drawn, drawn
    raw = _on_a_terminal(["show", "--markdown", str(task_dir)])
    assert "**7 kept**" in raw
