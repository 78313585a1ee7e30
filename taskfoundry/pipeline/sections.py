"""The shared stages' sections of a `Config`: what the flows hand a stage (and so key it on).

Kept apart from the stages, so no stage imports `Config` (and with it every component's
code, which would put them all in each stage's code hash). A kind cuts its own stages'
sections (`kinds/<kind>/sections.py`).
"""

from __future__ import annotations

from taskfoundry.config import Config
from taskfoundry.pipeline.build import BuildSettings


def for_build(config: Config) -> BuildSettings:
    return BuildSettings(
        out=config.out,
        namespace=config.namespace,
        executable=config.executable,
        base=config.base,
        build_agent=config.build_agent,
    )
