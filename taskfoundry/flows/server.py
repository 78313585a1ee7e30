"""Start Prefect's embedded server early, so its process boots while the command imports the
flows and the task kind (the parent waits for it otherwise, at the first flow run)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


def start_embedded_server() -> Callable[[], None]:
    """With no PREFECT_API_URL, start the temporary server Prefect would start at the first
    flow run, in a thread; returns the wait to call before that run (a no-op with a server)."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return lambda: None

    def start() -> None:
        # the same singleton Prefect's client uses: the flow finds it running
        from prefect.server.api.server import SubprocessASGIServer

        try:
            SubprocessASGIServer().start()
        except Exception:  # noqa: BLE001 - the first flow run starts it again and reports why not
            log.debug("early start of the embedded Prefect server failed", exc_info=True)

    thread = threading.Thread(target=start, name="prefect-server-start", daemon=True)
    thread.start()
    return thread.join
