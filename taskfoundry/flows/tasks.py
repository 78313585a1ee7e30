"""The pipeline's stages as Prefect tasks: persisted, cached by content, checked before reuse.

Each task only calls its stage function. `run_stage` runs one, tells whether it came
from the cache, and runs it again (refreshing the cache) when the cached result
points at an image or directory that is gone.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from prefect import task
from prefect.states import State
from prefect.tasks import Task

from taskfoundry.config import Config
from taskfoundry.flows import progress
from taskfoundry.flows.cache import STAGE_CACHE, result_storage, stale_reason
from taskfoundry.flows.limits import docker_build_slot, model_slot
from taskfoundry.images.build import image_exists
from taskfoundry.pipeline import package, stages
from taskfoundry.pipeline.results import (
    BuildStage,
    CleanroomStage,
    FilterStage,
    GenerateStage,
    LintStage,
    SourceResult,
)
from taskfoundry.sandbox.docker import docker_client

log = logging.getLogger(__name__)


@task(name="source")
def source_task(source: str, config: Config) -> SourceResult:
    # not cached: a path or a branch names different commits over time
    return stages.source_stage(source, config)


@task(name="build", cache_policy=STAGE_CACHE, persist_result=True)
def build_task(src: SourceResult, config: Config) -> BuildStage:
    with docker_build_slot():
        return stages.build_stage(src, config, docker_client())


@task(name="cleanroom", cache_policy=STAGE_CACHE, persist_result=True)
def cleanroom_task(src: SourceResult, build: BuildStage, config: Config) -> CleanroomStage:
    with docker_build_slot():
        clean = stages.cleanroom_stage(src, build, config, docker_client())
    stages.require_clean(clean)
    return clean


@task(name="generate", cache_policy=STAGE_CACHE, persist_result=True)
def generate_task(
    src: SourceResult, build: BuildStage, clean: CleanroomStage, config: Config
) -> GenerateStage:
    with model_slot(config):
        return stages.generate_stage(src, build, clean, config, docker_client())


@task(name="lint", cache_policy=STAGE_CACHE, persist_result=True)
def lint_task(gen: GenerateStage) -> LintStage:
    return stages.lint_stage(gen)


@task(name="filter", cache_policy=STAGE_CACHE, persist_result=True)
def filter_task(gen: GenerateStage, lint: LintStage, clean: CleanroomStage, config: Config) -> FilterStage:
    return stages.filter_stage(gen, lint, clean, config, docker_client())


@task(name="package")
def package_task(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    lint: LintStage,
    filt: FilterStage,
    config: Config,
    stage_seconds: dict[str, float],
) -> Path:
    # not cached: it writes the task directory, the thing a resumed run must produce
    return package.package_stage(src, build, clean, gen, lint, filt, config, docker_client(), stage_seconds)


@dataclass
class StageLog:
    """What ran and what came from the cache, with wall times, for one build."""

    source: str
    seconds: dict[str, float]
    cached: dict[str, bool]

    @classmethod
    def start(cls, source: str) -> StageLog:
        return cls(source=source, seconds={}, cached={})


def _image_exists(tag: str) -> bool:
    client = docker_client()
    try:
        return image_exists(client, tag)
    finally:
        client.close()


def run_stage(stage_log: StageLog, config: Config, fn: Task[..., Any], *args: Any) -> Any:
    """Run one stage task; on a cache hit whose result is stale, run it again fresh."""
    start = time.monotonic()
    persisted = fn.cache_policy is STAGE_CACHE
    resumable = persisted and config.orchestration.resume
    if persisted:
        fn = fn.with_options(result_storage=result_storage(config), refresh_cache=not resumable)
    state = cast(State[Any], fn(*args, return_state=True))
    result = state.result()  # raises the stage's own error when it failed
    cached = state.name == "Cached"
    reason = stale_reason(result, _image_exists) if cached else None
    if reason:
        log.warning("%s: cached %s result is stale (%s); running it again", stage_log.source, fn.name, reason)
        result = fn.with_options(refresh_cache=True)(*args)
        cached = False
    elif cached and isinstance(getattr(result, "built", None), bool):
        result = result.model_copy(update={"built": False})  # this run built no image
    name = fn.name
    stage_log.seconds[name] = time.monotonic() - start
    stage_log.cached[name] = cached
    progress.stage_done(stage_log.source, name, cached, stage_log.seconds[name])
    return result
