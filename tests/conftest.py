"""Shared fixtures. Docker tests skip without an engine, except in CI, where that fails."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _engine_error() -> str | None:
    try:
        from taskfoundry.sandbox.docker import docker_client

        docker_client().close()
        return None
    except Exception as exc:  # noqa: BLE001 - any reason the engine is out of reach
        return str(exc)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any(item.get_closest_marker("docker") for item in items):
        return
    error = _engine_error()
    if error is None:
        return
    if os.environ.get("CI") == "true":
        raise pytest.UsageError(f"CI=true but no Docker engine is reachable: {error}")
    skip = pytest.mark.skip(reason=f"no Docker engine: {error}")
    for item in items:
        if item.get_closest_marker("docker"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def docker_client():  # type: ignore[no-untyped-def]
    from taskfoundry.sandbox.docker import docker_client as make

    client = make()
    yield client
    client.close()


@pytest.fixture(scope="session")
def base_image(docker_client) -> str:  # type: ignore[no-untyped-def]
    from taskfoundry.images.base import BaseImageConfig, ensure_base_image

    return ensure_base_image(BaseImageConfig(), docker_client)


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect server for the whole session (its start-up takes seconds)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def csvq_task(prefect_harness, base_image, tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """The csvq example built once for the session through the real CLI: its task directory.
    Tests that change a task work on a copy."""
    from click.testing import CliRunner

    from taskfoundry.cli import main

    out = tmp_path_factory.mktemp("out")
    result = CliRunner().invoke(
        main, ["build", str(EXAMPLES / "csvq"), "--out", str(out), "--max-probes", "200"]
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    (task_dir,) = (out / "tasks").iterdir()
    return task_dir


def reference_submission(task_dir: Path, source: Path, dest: Path) -> Path:
    """The task's reference submission: its own solution.tar.gz where it has one, else the
    source tree with the task's build.sh as compile.sh."""
    import io
    import tarfile

    if (task_dir / "solution.tar.gz").is_file():
        return task_dir / "solution.tar.gz"
    files = {
        p.relative_to(source).as_posix(): p.read_bytes() for p in sorted(source.rglob("*")) if p.is_file()
    }
    files["compile.sh"] = (task_dir / "build.sh").read_bytes()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(dest, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return dest


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A tiny committed git repository: a fixture builder, not a large fixture."""
    import subprocess

    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *cmd], cwd=path, check=True, env=env)
    return path
