"""Agent harnesses authors already use, installed from PyPI into their own virtual environments
(none of them is a dependency of taskfoundry): made once per machine and kept in the user
cache, so a second run of the suite installs nothing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HARNESSES = Path.home() / ".cache" / "taskfoundry" / "harnesses"
DONE = ".installed"  # written last: a venv without it was cut short and is made again


def harness_venv(name: str, requirements: tuple[str, ...]) -> Path:
    """The venv `HARNESSES/name` with `requirements` installed (pinned: the name says the version)."""
    venv = HARNESSES / name
    marker = venv / DONE
    if marker.is_file() and marker.read_text() == "\n".join(requirements):
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run([*pip, *requirements], capture_output=True, text=True, timeout=1200, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(requirements)} failed:\n{done.stderr[-3000:]}")
    marker.write_text("\n".join(requirements))
    return venv


def venv_python(venv: Path, code: str) -> str:
    """What `code` prints, run by the venv's own Python."""
    cmd = [str(venv / "bin" / "python"), "-c", code]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return out.stdout.strip()
