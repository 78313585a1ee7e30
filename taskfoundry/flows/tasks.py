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
from prefect.cache_policies import CachePolicy
from prefect.states import State
from prefect.tasks import Task

from taskfoundry.config import Config
from taskfoundry.errors import StageError, TaskfoundryError
from taskfoundry.filtering.filter import FilterConfig
from taskfoundry.flows import progress
from taskfoundry.flows.cache import result_storage, stage_cache, stale_reason
from taskfoundry.flows.limits import docker_build_slot, model_slot
from taskfoundry.images.build import image_exists
from taskfoundry.pipeline import package
from taskfoundry.pipeline.build import BuildSettings, build_stage
from taskfoundry.pipeline.cleanroom import CleanroomSettings, cleanroom_stage, require_clean
from taskfoundry.pipeline.filter import filter_stage
from taskfoundry.pipeline.generate import GenerateSettings, generate_stage
from taskfoundry.pipeline.lint import lint_stage
from taskfoundry.pipeline.results import (
    BuildStage,
    CleanroomStage,
    FilterStage,
    GenerateStage,
    LintStage,
    SourceResult,
)
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import docker_client
from taskfoundry.sources import SourceConfig

log = logging.getLogger(__name__)


# The stage modules in run order: a stage's code key covers its module and those before it.
PIPELINE = tuple(
    f"taskfoundry.pipeline.{stage}" for stage in ("build", "cleanroom", "generate", "lint", "filter")
)


def _cache(stage: str) -> CachePolicy:
    return stage_cache(PIPELINE, f"taskfoundry.pipeline.{stage}")


@task(name="source")
def source_task(source: str, sources: SourceConfig, work_dir: Path) -> SourceResult:
    # not cached: a path or a branch names different commits over time
    return source_stage(source, sources, work_dir)


@task(name="build", cache_policy=_cache("build"), persist_result=True)
def build_task(src: SourceResult, settings: BuildSettings) -> BuildStage:
    with docker_build_slot():
        return build_stage(src, settings, docker_client())


@task(name="cleanroom", cache_policy=_cache("cleanroom"), persist_result=True)
def cleanroom_task(src: SourceResult, build: BuildStage, settings: CleanroomSettings) -> CleanroomStage:
    with docker_build_slot():
        clean = cleanroom_stage(src, build, settings, docker_client())
    require_clean(clean)
    return clean


@task(name="generate", cache_policy=_cache("generate"), persist_result=True)
def generate_task(
    src: SourceResult, build: BuildStage, clean: CleanroomStage, settings: GenerateSettings
) -> GenerateStage:
    with model_slot(settings.generator.name):
        return generate_stage(src, build, clean, settings, docker_client())


@task(name="lint", cache_policy=_cache("lint"), persist_result=True)
def lint_task(gen: GenerateStage) -> LintStage:
    return lint_stage(gen)


@task(name="filter", cache_policy=_cache("filter"), persist_result=True)
def filter_task(
    gen: GenerateStage, lint: LintStage, clean: CleanroomStage, settings: FilterConfig
) -> FilterStage:
    return filter_stage(gen, lint, clean, settings, docker_client())


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
    """Run one stage task; on a cache hit whose result is stale, run it again fresh.

    What the stage raised comes out as a StageError naming it: only this wrapper knows
    which stage was running."""
    start = time.monotonic()
    try:
        result, cached = _run(stage_log, config, fn, args)
    except StageError:
        raise
    except TaskfoundryError as exc:
        raise StageError.wrap(fn.name, exc) from exc
    name = fn.name
    stage_log.seconds[name] = time.monotonic() - start
    stage_log.cached[name] = cached
    progress.stage_done(stage_log.source, name, cached, stage_log.seconds[name])
    return result


def _run(stage_log: StageLog, config: Config, fn: Task[..., Any], args: tuple[Any, ...]) -> tuple[Any, bool]:
    persisted = bool(fn.persist_result)
    resumable = persisted and config.orchestration.resume
    if persisted:
        fn = fn.with_options(result_storage=result_storage(config), refresh_cache=not resumable)
    state = cast(State[Any], fn(*args, return_state=True))
    result = state.result()  # raises the stage's own error when it failed
    cached = state.name == "Cached"
    reason = stale_reason(result, _image_exists) if cached else None
    if reason:
        log.warning("%s: cached %s result is stale (%s); running it again", stage_log.source, fn.name, reason)
        return fn.with_options(refresh_cache=True)(*args), False
    if cached and isinstance(getattr(result, "built", None), bool):
        result = result.model_copy(update={"built": False})  # this run built no image
    return result, cached
