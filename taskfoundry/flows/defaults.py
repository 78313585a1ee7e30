"""Prefect settings taskfoundry changes the default of, unless the user set them.

Telemetry: the embedded server's telemetry service and the client's analytics would each
try to reach Prefect's collector on every run (offline: `Failed to send telemetry` on the
terminal). taskfoundry turns both off by default; a user who set
`PREFECT_SERVER_ANALYTICS_ENABLED` (in the environment, a Prefect profile or prefect.toml)
keeps their choice, and so does one who set `DO_NOT_TRACK`. The values go into this
process's environment, which the embedded server's process inherits; no profile is written.
"""

from __future__ import annotations

import os


def apply_prefect_defaults() -> None:
    from prefect.settings import get_current_settings

    from taskfoundry.prefect_env import user_chose_in_settings

    if "analytics_enabled" in get_current_settings().server.model_fields_set:
        user_chose_in_settings()  # in a profile or prefect.toml: no default of ours stays
        return
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    os.environ.setdefault("DO_NOT_TRACK", "1")
