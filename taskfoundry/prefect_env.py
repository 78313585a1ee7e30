"""What must be in the environment before Prefect is imported: no telemetry notice, and the
address of a running dashboard (`taskfoundry.dashboard`).

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
OWN_SERVER_ENV = "TASKFOUNDRY_OWN_PREFECT_SERVER"  # the API address of a command's own server
_SET_HERE: set[str] = set()  # what before_prefect set, for `user_chose_in_settings` to take back


def before_prefect() -> None:
    """Set `DO_NOT_TRACK=1` unless Prefect is imported already or the user chose; point at a
    running dashboard."""
    if "prefect" in sys.modules:
        return
    if not any(name in os.environ for name in USER_CHOICES):
        os.environ["DO_NOT_TRACK"] = "1"
        _SET_HERE.add("DO_NOT_TRACK")
    from taskfoundry.dashboard import point_at_dashboard

    point_at_dashboard()


def user_chose_in_settings() -> None:
    """The user chose telemetry in a Prefect profile or prefect.toml (readable only once Prefect
    is imported): take back the `DO_NOT_TRACK` set before, so their choice stands."""
    for name in _SET_HERE:
        os.environ.pop(name, None)
    _SET_HERE.clear()
