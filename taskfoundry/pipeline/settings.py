"""What every stage's config section holds, and the limits of the containers probes run in.

Each stage receives its own section (a subclass of `StageSettings`, declared in its kind's
`settings.py`, or beside a shared stage), never the whole `Config`: the section is part of
the stage's cache key, so a field the stage does not read cannot re-run it.
`taskfoundry.sections` cuts them out of a `Config`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from taskfoundry.naming import Pinned, TaskNames
from taskfoundry.sandbox.base import SandboxLimits

PROBE_LIMITS = SandboxLimits(memory_mb=2048, pids=512, output_bytes=512 * 1024 * 1024)


class StageSettings(BaseModel):
    """Where the run writes and how its images are named: a stage asks `names` for both."""

    model_config = {"extra": "forbid", "frozen": True}

    out: Path
    namespace: str

    def names(self, src: Pinned) -> TaskNames:
        return TaskNames.of(src, self.namespace, self.out)
