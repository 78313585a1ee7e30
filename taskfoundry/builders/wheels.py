"""A wheelhouse for an offline `pip install` of a Python project in the build image.

On the host: build the project's wheel once to read its dependencies (pip resolves
the build backend from the index), then `pip download` wheels of the backend and of
every runtime dependency for the image's Python. The build image installs from it
with `--no-index`.
"""

from __future__ import annotations

import email.parser
import hashlib
import logging
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from taskfoundry.builders.detect_python import build_requires
from taskfoundry.builders.pick import read
from taskfoundry.errors import BuildError

log = logging.getLogger(__name__)

IMAGE_PYTHON = "3.13"  # the base image's python3
_INPUTS = ("pyproject.toml", "setup.cfg", "setup.py", "PKG-INFO", "requirements.txt")


def wheelhouse(src: Path, dest: Path, cache: Path) -> list[str]:
    """Fill `dest` with wheels for `src`; returns notes for the build log."""
    backend = build_requires(src)  # in the key too: what is asked for besides may grow
    key = hashlib.sha256("\0".join([*(read(src / n) for n in _INPUTS), *backend]).encode()).hexdigest()[:16]
    cached = cache / f"wheels-{key}"
    if not cached.exists():
        with tempfile.TemporaryDirectory(prefix="tf-wheels-") as tmp:
            wheels = Path(tmp) / "wheels"
            requirements = ["wheel", *backend, *runtime_requires(src, Path(tmp))]
            _download(requirements, wheels)
            cached.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(wheels, cached.with_suffix(".part"), dirs_exist_ok=True)
            cached.with_suffix(".part").rename(cached)
    shutil.copytree(cached, dest)
    return [f"python: {len(list(dest.iterdir()))} distributions in the wheelhouse"]


def _pip(args: list[str], what: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", *args, "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BuildError(f"{what} failed on the host: {proc.stderr.strip()[-1500:]}")


def runtime_requires(src: Path, tmp: Path) -> list[str]:
    """Requires-Dist of the project, read from a wheel built on the host (no dependencies)."""
    out, copy = tmp / "project", tmp / "src"
    shutil.copytree(src, copy, symlinks=True)  # a build leaves build/ and *.egg-info behind
    _pip(["wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(copy)], "building the wheel")
    wheel = next(out.glob("*.whl"), None)
    if wheel is None:
        raise BuildError("pip wheel produced no wheel for the project")
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(zf.read(name).decode())
    return [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]


def _download(requirements: list[str], wheels: Path) -> None:
    """Wheels for the image's Python; failing that (an sdist-only package), whatever pip finds."""
    base = ["download", "--quiet", "--dest", str(wheels)]
    try:
        _pip(
            [*base, "--only-binary=:all:", "--python-version", IMAGE_PYTHON, *requirements],
            "pip download (wheels)",
        )
    except BuildError as exc:
        log.info("no wheels for every requirement (%s); allowing sdists", exc.message[-200:])
        _pip([*base, *requirements], "pip download")
