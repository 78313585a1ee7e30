"""The environment stage (the kind's `start_state` part): an image with the repository's test
dependencies, and one run of its own test suite there.

Wheels are fetched on the host (containers reach no index) for the image's Python, once
per requirement list; the image is base + a venv (`--system-site-packages`) holding
them, content-addressed, never holding the repository itself (the start-state images add
the stripped tree). The suite then runs once, the project installed in editable mode:
test files that do not pass completely are left out of every task.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import docker

from taskfoundry.builders.detect_python import project_name
from taskfoundry.builders.wheels import IMAGE_PYTHON
from taskfoundry.errors import BuildError, FeatureError
from taskfoundry.images.base import ensure_base_image
from taskfoundry.images.layer import inputs_image
from taskfoundry.images.run_layer import build_on_inputs
from taskfoundry.kinds.feature.requirements import test_requirements
from taskfoundry.kinds.feature.results import EnvStage, TestCase
from taskfoundry.kinds.feature.runner import CHECK_LIMITS, VENV, RepoBox, repo_files
from taskfoundry.kinds.feature.settings import FeatureSettings
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)
WHEELS = "/opt/tf-wheels"


def is_test_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def environment_stage(
    src: SourceResult, build: BuildStage | None, settings: FeatureSettings, client: docker.DockerClient
) -> EnvStage:
    """Build (or find) the environment image and run the repository's tests once in it."""
    repo = src.path
    if not any((repo / n).exists() for n in ("pyproject.toml", "setup.py", "setup.cfg")):
        raise FeatureError("not a Python project (no pyproject.toml, setup.py or setup.cfg)")
    names = settings.names(src)
    base = ensure_base_image(settings.base, client)
    requirements = test_requirements(repo, settings.feature.test_requires)
    context = names.work_dir / "feature" / names.task_id / "env"
    notes = _context(context, requirements, names.work_dir / "cache" / "feature-wheels")
    repository = f"{names.namespace}/feature-env"
    entries = {WHEELS: context / "wheels", f"{WHEELS}/requirements.txt": context / "requirements.txt"}
    inputs = inputs_image(client, base, entries, {}, repository)
    folder, logfile = context.parent / "env-image", context.parent / "env.log"
    image, built = build_on_inputs(client, inputs, _env_run(), folder, repository, logfile)
    files = repo_files(repo)
    with DockerSandbox(image, CHECK_LIMITS, client=client) as box:
        runner = RepoBox(box)
        runner.load(files)
        tests, tail = runner.pytest([], settings.feature.test_timeout, settings.feature.suite_timeout)
    if not tests:
        raise FeatureError(f"the repository's tests do not run: {tail[-1500:]}")
    passing, failing = split_files(tests)
    if not passing:
        shown = "; ".join(f"{f}: {why}" for f, why in sorted(failing.items())[:5])
        raise FeatureError(f"no test file passes completely ({len(failing)} ran: {shown})")
    return EnvStage(
        image=image,
        built=built,
        repo=repo,
        project=project_name(repo) or src.repo,
        requirements=requirements,
        tests=tests,
        passing_files=passing,
        failing_files=failing,
        notes=notes,
    )


def split_files(tests: list[TestCase]) -> tuple[list[str], dict[str, str]]:
    """Test files whose every case passed (skips allowed, not only skips), and the others with why."""
    by_file: dict[str, list[str]] = defaultdict(list)
    for case in tests:
        by_file[case.file].append(case.status)
    passing, failing = [], {}
    for file, statuses in sorted(by_file.items()):
        if not is_test_file(file):
            continue  # doctests of modules, collection errors of non-test files
        bad = [s for s in statuses if s in ("failure", "error")]
        if bad:
            failing[file] = f"{len(bad)} of {len(statuses)} tests fail"
        elif "passed" not in statuses:
            failing[file] = "every test is skipped"
        else:
            passing.append(file)
    return passing, failing


def _context(context: Path, requirements: list[str], cache: Path) -> list[str]:
    """The image's inputs: the wheelhouse and the requirement list."""
    shutil.rmtree(context, ignore_errors=True)
    context.mkdir(parents=True)
    wheels, kept, notes = wheelhouse(requirements, cache)
    shutil.copytree(wheels, context / "wheels")
    (context / "requirements.txt").write_text("".join(f"{r}\n" for r in kept))
    return notes


def _env_run() -> str:
    """The one RUN over the inputs image (the wheelhouse in WHEELS)."""
    return (
        f"python3 -m venv --system-site-packages {VENV} \\\n"
        f" && {VENV}/bin/pip install --no-index --find-links {WHEELS} --no-cache-dir "
        f"--disable-pip-version-check -r {WHEELS}/requirements.txt \\\n"
        f" && mkdir -p /workspace && chown 1000:1000 /workspace"
    )


def wheelhouse(requirements: list[str], cache: Path) -> tuple[Path, list[str], list[str]]:
    """Wheels for the image's Python: all at once, else one by one (a requirement with no wheel
    for it is left out, with a note). Cached by the requirement list."""
    key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:16]
    done = cache / key
    kept_file = done / ".kept"
    if kept_file.exists():
        return done, kept_file.read_text().splitlines(), [f"wheelhouse {key} reused"]
    tmp = cache / f"{key}.part"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    notes: list[str] = []
    if _download(requirements, tmp) is None:
        kept = list(requirements)
    else:
        kept = []
        for req in requirements:
            error = _download([req], tmp)
            if error is None:
                kept.append(req)
            else:
                notes.append(f"left out {req}: no wheel for Python {IMAGE_PYTHON} ({error[-300:]})")
    if "pytest" not in " ".join(kept):
        raise BuildError(f"pytest itself could not be fetched: {notes}")
    (tmp / ".kept").write_text("\n".join(kept))
    shutil.rmtree(done, ignore_errors=True)
    tmp.rename(done)
    return done, kept, notes


def _download(requirements: list[str], dest: Path) -> str | None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--only-binary=:all:",
            "--python-version",
            IMAGE_PYTHON,
            "--dest",
            str(dest),
            *requirements,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return None if proc.returncode == 0 else proc.stderr.strip()
