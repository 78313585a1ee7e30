"""Prefect global concurrency limits on the scarce resources: Docker builds and model calls.

The limits live on the Prefect server, so they hold across every flow run that
server sees: two build-many runs on two workers share the same Docker-build slots.
`ensure_limits` sets them from the config at the start of every build and batch, so
the config is where to change them (`prefect gcl ls` shows them).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate
from prefect.concurrency.sync import concurrency
from prefect.settings import PREFECT_API_URL

from taskfoundry.config import Config
from taskfoundry.prefect_env import OWN_SERVER_ENV

log = logging.getLogger(__name__)

DOCKER_BUILDS = "taskfoundry-docker-builds"
MODEL_CALLS = "taskfoundry-model-calls"


def ensure_limits(config: Config) -> None:
    """Create (or resize) the global concurrency limits this config asks for. On this command's
    own server, slots still taken are released first: they were taken by a run that died (a
    build-many killed with SIGKILL), whose leases lived in its own server's memory and went
    with it, while the count stayed in the database every run shares; and an embedded server
    runs no repossessor to expire them. The next run would wait for them for ever."""
    wanted = {
        DOCKER_BUILDS: config.orchestration.docker_builds,
        MODEL_CALLS: config.orchestration.model_calls,
    }
    own = os.environ.get(OWN_SERVER_ENV)
    with get_client(sync_client=True) as client:
        for name, slots in wanted.items():
            client.upsert_global_concurrency_limit_by_name(name, slots)
            if own and own == PREFECT_API_URL.value():
                _release_orphans(client, name)
            log.debug("concurrency limit %s: %d slots", name, slots)


def _release_orphans(client: SyncPrefectClient, name: str) -> None:
    taken = client.read_global_concurrency_limit_by_name(name).active_slots
    if taken:
        log.warning("%s: %d slots held by runs that are gone, released", name, taken)
        client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(active_slots=0))


@contextmanager
def docker_build_slot() -> Iterator[None]:
    """Hold one Docker-build slot (a no-op, with Prefect's warning, when the limit is missing)."""
    with concurrency(DOCKER_BUILDS, occupy=1):
        yield


@contextmanager
def model_slot(uses_model: bool) -> Iterator[None]:
    """Hold one model-call slot while a model-driven generator runs; the explorer needs none."""
    if not uses_model:
        yield
        return
    with concurrency(MODEL_CALLS, occupy=1):
        yield
