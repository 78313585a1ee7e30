"""Prefect global concurrency limits on the scarce resources: Docker builds and model calls.

The limits live on the Prefect server, so they hold across every flow run that
server sees: two build-many runs on two workers share the same Docker-build slots.
`ensure_limits` sets them from the config at the start of every build and batch, so
the config is where to change them (`prefect gcl ls` shows them).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate
from prefect.concurrency.sync import concurrency
from prefect.settings import PREFECT_API_URL, get_current_settings

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
    mine = bool(own and own == PREFECT_API_URL.value())
    alone = mine and alone_on_database()
    with get_client(sync_client=True) as client:
        for name, slots in wanted.items():
            client.upsert_global_concurrency_limit_by_name(name, slots)
            if mine:
                _release_orphans(client, name, alone)
            log.debug("concurrency limit %s: %d slots", name, slots)


def _release_orphans(client: SyncPrefectClient, name: str, alone: bool) -> None:
    taken = client.read_global_concurrency_limit_by_name(name).active_slots
    if taken and alone:
        log.warning("%s: %d slots held by runs that are gone, released", name, taken)
        client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(active_slots=0))
    elif taken:
        log.warning("%s: %d slots taken, and another command is running on this database: left", name, taken)


_HELD: dict[str, int] = {}  # lock file -> its descriptor, open for this process's life


def alone_on_database() -> bool:
    """Whether no other command on its own server uses this Prefect database now. Each holds a
    shared lock on a file beside the database for its life (the kernel drops it when the process
    dies, however it dies); one that can take it exclusively is alone, and only then are the
    slots it finds taken a dead run's: `make demo` and a yield run at once, the yield's start
    released the demo's live build slot. Asked once a command: build-many calls this at each
    source's start, while its other sources hold slots."""
    path = _lock_path()
    if path in _HELD:  # asked at this command's start; a slot taken since is a live run's (its own)
        return False
    try:
        fd = _HELD[path] = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:  # a read-only Prefect home: not knowing, leave every slot where it is
        log.warning("cannot open %s (%s): slots taken are left, as if another command ran", path, exc)
        _HELD[path] = -1
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        alone = True
    except BlockingIOError:
        alone = False
    fcntl.flock(fd, fcntl.LOCK_SH)  # from now on, others see this command
    return alone


def _lock_path() -> str:
    """Beside a SQLite database; for a database server, in Prefect's home, named by its URL."""
    settings = get_current_settings()
    url = settings.server.database.connection_url
    url_text = url.get_secret_value() if url is not None else ""
    database = url_text.split("///", 1)[1] if url_text.startswith("sqlite") and "///" in url_text else ""
    if database.startswith("/"):
        return database + ".taskfoundry-commands.lock"
    digest = hashlib.sha256(url_text.encode()).hexdigest()[:16]
    return str(settings.home / f"taskfoundry-commands-{digest}.lock")


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
