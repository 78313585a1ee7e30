"""Running a repository's own pytest suite in a container of the environment image.

The checks of the build (the baseline run, the trace, validation) all run this way: the
tree copied to /workspace, the project installed in editable mode (no index, no
dependencies: the image holds them), pytest with a JUnit report (xunit1, so each case
names its file). Grading runs the same command through the shared harness instead.
"""

from __future__ import annotations

import io
import shlex
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from taskfoundry.errors import SandboxError
from taskfoundry.grading.junit import read_cases
from taskfoundry.kinds.feature.results import TestCase
from taskfoundry.layout import WORKSPACE
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

VENV = "/opt/tf-venv"
PYTHON = f"{VENV}/bin/python"
RESULTS = "/tmp/tf-results.xml"
CHECK_LIMITS = SandboxLimits(memory_mb=4096, pids=1024, output_bytes=16 * 1024 * 1024)
WORKER = "1000:1000"  # the tests run as the worker, as they will when graded
INSTALL = f"{PYTHON} -m pip install --no-index --no-deps --no-build-isolation --no-cache-dir --quiet -e ."
# a fixed time for files put into containers: reproducible, and after 1980 (a wheel is a zip,
# which cannot hold older timestamps; an editable install of a flit project builds one)
MTIME = 1_577_836_800  # 2020-01-01
_SKIP_DIRS = {".git", ".tox", ".nox", ".venv", "venv", "__pycache__", ".pytest_cache", "build", "dist"}


def pytest_command(
    files: list[str], test_timeout: float, junit: str = RESULTS, deselect: Sequence[str] = ()
) -> str:
    """The one pytest command of a feature task: these files but the `deselect`ed tests (node
    ids), a JUnit report, per-test timeout."""
    return shlex.join(
        [
            PYTHON,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-o",
            "junit_family=xunit1",
            f"--junitxml={junit}",
            f"--timeout={int(test_timeout)}",
            "-q",
            *(f"--deselect={test}" for test in deselect),
            *files,
        ]
    )


def tree_tar(files: Mapping[str, bytes]) -> bytes:
    """A tar of `files` (relative path -> content), every entry readable by all."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for rel, data in sorted(files.items()):
            info = tarfile.TarInfo(rel)
            info.size, info.mode, info.mtime = len(data), 0o644, MTIME
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def repo_files(repo: Path) -> dict[str, bytes]:
    """The repository's regular files (no VCS, caches or build output), by relative path."""
    out: dict[str, bytes] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        if _SKIP_DIRS.intersection(rel.parts[:-1]) or rel.parts[0] in _SKIP_DIRS:
            continue
        if path.is_file() and not path.is_symlink() and not path.name.endswith((".pyc", ".pyo")):
            out[rel.as_posix()] = path.read_bytes()
    return out


class RepoBox:
    """A container of the environment image holding one tree of the repository at /workspace."""

    def __init__(self, box: DockerSandbox) -> None:
        self.box = box

    def load(self, files: Mapping[str, bytes], install: bool = True) -> str:
        """Put `files` in /workspace (emptied first) and install the project; returns the log."""
        self.box.exec(f"rm -rf {WORKSPACE} && mkdir -p {WORKSPACE}", timeout=120, user="0:0")
        self.box.container.put_archive(WORKSPACE, tree_tar(files))
        if not install:
            return ""
        res = self.box.exec(f"{INSTALL} && chown -R {WORKER} .", timeout=600, workdir=WORKSPACE, user="0:0")
        if not res.ok:
            raise SandboxError(f"editable install of the project failed: {res.text()[-1500:]}")
        return res.text()

    def put(self, files: Mapping[str, bytes]) -> None:
        """Overwrite these files of the loaded tree."""
        self.box.container.put_archive(WORKSPACE, tree_tar(files))
        self.box.exec(f"chown -R {WORKER} {WORKSPACE}", timeout=120, user="0:0")

    def pytest(
        self, files: list[str], test_timeout: float, timeout: float, env: Mapping[str, str] | None = None
    ) -> tuple[list[TestCase], str]:
        """Run `files`; the cases of the JUnit report and pytest's output tail."""
        self.box.exec(f"rm -f {RESULTS}", timeout=30, user="0:0")
        res = self.box.exec(
            pytest_command(files, test_timeout),
            timeout=timeout,
            workdir=WORKSPACE,
            env={"HOME": "/home/worker", **(env or {})},
            user=WORKER,
        )
        tail = res.text()[-3000:]
        if res.timed_out:
            return [], f"pytest ran past {timeout:.0f} s\n{tail}"
        try:
            xml = self.box.get_file(RESULTS)
        except FileNotFoundError:
            return [], f"no JUnit report (exit {res.exit_code})\n{tail}"
        try:
            return parse_cases(xml), tail
        except (SyntaxError, ValueError, UnicodeDecodeError, AttributeError, TypeError) as exc:
            return [], f"unreadable JUnit report: {exc}\n{tail}"


def parse_cases(xml: bytes) -> list[TestCase]:
    """Cases of a JUnit report: id, file and status (`taskfoundry.grading.junit` reads it)."""
    return [TestCase(junit=c.junit, file=c.file, status=c.outcome.status) for c in read_cases(xml)]
