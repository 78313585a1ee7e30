"""Prefect global concurrency limits on the scarce resources: Docker builds and model calls.

The limits live on the Prefect server, so they hold across every flow run that
server sees: two build-many runs on two workers share the same Docker-build slots.
`ensure_limits` sets them from the config at the start of every build and batch, so
the config is where to change them (`prefect gcl ls` shows them).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency

from taskfoundry.config import Config

log = logging.getLogger(__name__)

DOCKER_BUILDS = "taskfoundry-docker-builds"
MODEL_CALLS = "taskfoundry-model-calls"


def ensure_limits(config: Config) -> None:
    """Create (or resize) the global concurrency limits this config asks for."""
    wanted = {
        DOCKER_BUILDS: config.orchestration.docker_builds,
        MODEL_CALLS: config.orchestration.model_calls,
    }
    with get_client(sync_client=True) as client:
        for name, slots in wanted.items():
            client.upsert_global_concurrency_limit_by_name(name, slots)
            log.debug("concurrency limit %s: %d slots", name, slots)


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
