"""A run killed while it held a Docker-build slot: the next run on its own server goes on; a
run still alive in another command, or in this one, keeps its slot."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate
from prefect.concurrency.sync import concurrency
from prefect.settings import PREFECT_API_URL

from taskfoundry.config import Config
from taskfoundry.flows import limits
from taskfoundry.flows.limits import DOCKER_BUILDS, ensure_limits
from taskfoundry.prefect_env import OWN_SERVER_ENV


@pytest.fixture()
def orphaned(prefect_harness: None) -> Iterator[int]:
    """Every Docker-build slot taken, as a build-many killed with SIGKILL leaves them: the count
    in the database, the leases gone with its server's memory."""
    config = Config()
    ensure_limits(config)
    slots = config.orchestration.docker_builds
    _set_taken(slots)
    _new_command()
    yield slots
    _set_taken(0)
    _new_command()


def _new_command() -> None:
    """This process as a command that has not asked yet (its lock let go)."""
    for fd in limits._HELD.values():
        if fd >= 0:
            os.close(fd)
    limits._HELD.clear()


def _set_taken(slots: int) -> None:
    with get_client(sync_client=True) as client:
        update = GlobalConcurrencyLimitUpdate(active_slots=slots)
        client.update_global_concurrency_limit(DOCKER_BUILDS, update)


def _taken() -> int:
    with get_client(sync_client=True) as client:
        return client.read_global_concurrency_limit_by_name(DOCKER_BUILDS).active_slots


def test_a_run_on_its_own_server_releases_slots_a_dead_run_held(
    orphaned: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OWN_SERVER_ENV, str(PREFECT_API_URL.value()))
    ensure_limits(Config())
    assert _taken() == 0
    with concurrency(DOCKER_BUILDS, occupy=1, timeout_seconds=10):
        assert _taken() == 1


def test_on_a_shared_server_the_slots_are_left_and_the_run_waits(
    orphaned: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defence off (a server others may use, or before this fix): the slot never frees."""
    monkeypatch.delenv(OWN_SERVER_ENV, raising=False)
    ensure_limits(Config())
    assert _taken() == orphaned
    with pytest.raises(TimeoutError), concurrency(DOCKER_BUILDS, occupy=1, timeout_seconds=3):
        pass


# another command on the same database, alive: it asked at its start and holds its lock
_OTHER = (
    "import sys, time\n"
    "from taskfoundry.flows.limits import alone_on_database\n"
    "print(alone_on_database(), flush=True)\n"
    "time.sleep(120)\n"
)


@pytest.fixture()
def other_command(prefect_harness: None) -> Iterator[subprocess.Popen[str]]:
    from prefect.settings import get_current_settings

    url = get_current_settings().server.database.connection_url
    assert url is not None
    env = {**os.environ, "PREFECT_SERVER_DATABASE_CONNECTION_URL": url.get_secret_value()}
    proc = subprocess.Popen([sys.executable, "-c", _OTHER], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "True"
    yield proc
    proc.kill()
    proc.wait()


def test_slots_a_live_command_holds_are_left(
    orphaned: int, other_command: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make demo` building while a yield run starts, both on their own servers and one
    database: the yield's start released the demo's live slot. Once the other command is gone
    (killed: the kernel drops its lock), the next command releases them."""
    monkeypatch.setenv(OWN_SERVER_ENV, str(PREFECT_API_URL.value()))
    ensure_limits(Config())
    assert _taken() == orphaned
    other_command.kill()
    other_command.wait()
    _new_command()
    ensure_limits(Config())
    assert _taken() == 0


def test_without_the_check_a_live_command_loses_its_slots(
    orphaned: int, other_command: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defence off: every command on its own server taken to be alone, as before."""
    monkeypatch.setenv(OWN_SERVER_ENV, str(PREFECT_API_URL.value()))
    monkeypatch.setattr(limits, "alone_on_database", lambda: True)
    ensure_limits(Config())
    assert _taken() == 0


def test_a_command_releases_only_at_its_start(orphaned: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """build-many sets the limits at each source's start, while its other sources hold slots."""
    monkeypatch.setenv(OWN_SERVER_ENV, str(PREFECT_API_URL.value()))
    ensure_limits(Config())
    assert _taken() == 0
    with concurrency(DOCKER_BUILDS, occupy=1, timeout_seconds=10):
        ensure_limits(Config())  # the next source starts
        assert _taken() == 1


def test_a_lock_that_cannot_be_made_leaves_the_slots(
    orphaned: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A Prefect home the command cannot write: not knowing whether it is alone, it leaves the
    slots (a wait, not a live run's slot lost) and says why, instead of a bare OSError."""
    monkeypatch.setenv(OWN_SERVER_ENV, str(PREFECT_API_URL.value()))
    missing = tmp_path / "no-such-folder" / "db.taskfoundry-commands.lock"
    monkeypatch.setattr(limits, "_lock_path", lambda: str(missing))
    ensure_limits(Config())
    assert _taken() == orphaned
    assert str(missing) in caplog.text
