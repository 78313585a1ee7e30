"""Runs the program under test for taskfoundry's behavioral tests.

The executable is `$TF_EXECUTABLE`, by default `executable` in the workspace
(two levels above this file: eval/tests/tfrun.py), so the same tests run
against the gold program, the dummies and a submission.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

WORKSPACE = Path(__file__).resolve().parents[2]
TIMEOUT = float(os.environ.get("TF_TIMEOUT", "10"))


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


def executable() -> str:
    return os.environ.get("TF_EXECUTABLE", str(WORKSPACE / "executable"))


def run(args, stdin="", files=None, cwd=None):
    """Run the program with `args` in `cwd`, after writing `files` (relative path -> text);
    `stdin` is text or bytes."""
    cwd = Path(cwd or os.getcwd())
    for name, content in (files or {}).items():
        path = cwd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(cwd),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
    }
    # generation only: coverage variables named in TF_PASSENV reach the program
    for name in filter(None, os.environ.get("TF_PASSENV", "").split(":")):
        if name in os.environ:
            env[name] = os.environ[name]
    # TF_ARGV0: the name the program sees during generation, the workspace path it has later
    argv0 = os.environ.get("TF_ARGV0") or executable()
    data = stdin.encode() if isinstance(stdin, str) else stdin  # bytes: binary input
    proc = subprocess.run(
        [argv0, *args],
        executable=executable(),
        input=data,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=TIMEOUT,
        start_new_session=True,
    )
    return Result(
        proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )
