"""What must be in the environment before Prefect is imported.

Prefect prints its first-run telemetry notice ("Prefect collects anonymous usage data...") while
it is imported, in an interactive terminal, unless `DO_NOT_TRACK` is set: setting it later
(`flows.defaults`, once Prefect's settings can be read) comes too late for the notice. taskfoundry
turns telemetry off by default, so it sets `DO_NOT_TRACK=1` first, unless the user chose either
way in the environment (`DO_NOT_TRACK`, `PREFECT_SERVER_ANALYTICS_ENABLED`).
"""

from __future__ import annotations

import os
import sys

USER_CHOICES = ("DO_NOT_TRACK", "PREFECT_SERVER_ANALYTICS_ENABLED")


def before_prefect() -> None:
    """Set `DO_NOT_TRACK=1` unless Prefect is imported already or the user chose."""
    if "prefect" in sys.modules or any(name in os.environ for name in USER_CHOICES):
        return
    os.environ["DO_NOT_TRACK"] = "1"
