"""A run killed while it held a Docker-build slot: the next run on its own server goes on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate
from prefect.concurrency.sync import concurrency
from prefect.settings import PREFECT_API_URL

from taskfoundry.config import Config
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
    yield slots
    _set_taken(0)


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
