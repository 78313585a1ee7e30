"""The pipeline's stages as Prefect tasks: persisted, cached by content, checked before reuse.

Each task only calls its stage function: the shared source and build stages, then the
parts of the task's kind (`taskfoundry.kinds`). `run_stage` runs one, tells whether it came
from the cache, and runs it again (refreshing the cache) when the cached result
points at an image or directory that is gone.
"""

from __future__ import annotations

import logging
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

from prefect import task
from prefect.states import State
from prefect.tasks import Task

from taskfoundry import progress
from taskfoundry.config import Config
from taskfoundry.errors import StageError, TaskfoundryError
from taskfoundry.flows.cache import result_storage, shared_root, stage_cache, stale_reason
from taskfoundry.flows.limits import docker_build_slot, model_slot
from taskfoundry.images.build import image_exists
from taskfoundry.kinds.base import PARTS, Part, TaskKind, make_kind
from taskfoundry.pipeline.build import BuildSettings, build_stage
from taskfoundry.pipeline.provenance import StageTimes
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import docker_client
from taskfoundry.sources import SourceConfig

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


BUILD = build_stage.__module__


@task(name="source")
def source_task(source: str, sources: SourceConfig, work_dir: Path) -> SourceResult:
    # not cached: a path or a branch names different commits over time
    return source_stage(source, sources, work_dir)


@task(name="build", cache_policy=stage_cache((BUILD,), BUILD), persist_result=True)
def build_task(src: SourceResult, settings: BuildSettings) -> BuildStage:
    with docker_build_slot():
        return build_stage(src, settings, docker_client())


# A kind's parts: one task each, named and keyed for the kind by `kind_tasks`. The kind goes
# in by name (it is part of every key); its parts' results are its own pydantic models.


@task(persist_result=True)
def start_state_task(kind: str, src: SourceResult, build: BuildStage | None, settings: Any) -> Any:
    the_kind = make_kind(kind)
    slot = docker_build_slot() if the_kind.stages["start_state"].docker_builds else nullcontext()
    with slot:
        return the_kind.start_state(src, build, settings, docker_client())


@task(persist_result=True)
def generate_task(kind: str, src: SourceResult, build: BuildStage | None, start: Any, settings: Any) -> Any:
    with model_slot(bool(getattr(settings, "uses_model", False))):
        return make_kind(kind).generate(src, build, start, settings, docker_client())


@task(persist_result=True)
def review_task(kind: str, suite: Any) -> Any:
    return make_kind(kind).review(suite)


@task(persist_result=True)
def validate_task(kind: str, suite: Any, review: Any, start: Any, settings: Any) -> Any:
    return make_kind(kind).validate(suite, review, start, settings, docker_client())


@task(persist_result=True)
def strengthen_task(
    kind: str,
    src: SourceResult,
    build: BuildStage | None,
    start: Any,
    suite: Any,
    review: Any,
    verdict: Any,
    settings: Any,
) -> tuple[Any, Any]:
    the_kind = make_kind(kind)
    slot = docker_build_slot() if the_kind.stages["strengthen"].docker_builds else nullcontext()
    with slot:
        return the_kind.strengthen(src, build, start, suite, review, verdict, settings, docker_client())


@dataclass(frozen=True)
class PartTasks:
    """A kind's parts as tasks, each typed as its function: `run_stage` checks every call."""

    start_state: Task[[str, SourceResult, BuildStage | None, Any], Any]
    generate: Task[[str, SourceResult, BuildStage | None, Any, Any], Any]
    review: Task[[str, Any], Any]
    validate: Task[[str, Any, Any, Any, Any], Any]
    strengthen: Task[[str, SourceResult, BuildStage | None, Any, Any, Any, Any, Any], tuple[Any, Any]] | None

    def in_order(self) -> list[Task[..., Any]]:
        """The tasks the kind declares, in run order."""
        found: list[Task[..., Any] | None] = [
            self.start_state,
            self.generate,
            self.review,
            self.validate,
            self.strengthen,
        ]
        return [t for t in found if t is not None]


def kind_pipeline(kind: TaskKind[Any, Any, Any, Any]) -> tuple[str, ...]:
    """The stage modules in run order: a stage's code key covers its module and those before."""
    return (BUILD, *(kind.stages[part].module for part in PARTS if part in kind.stages))


def kind_tasks(kind: TaskKind[Any, Any, Any, Any]) -> PartTasks:
    """The kind's parts as tasks: named as the kind names them, keyed on their own code."""
    pipeline = kind_pipeline(kind)

    def made(fn: Task[P, R], part: Part) -> Task[P, R]:
        stage = kind.stages[part]
        return fn.with_options(name=stage.name, cache_policy=stage_cache(pipeline, stage.module))

    return PartTasks(
        start_state=made(start_state_task, "start_state"),
        generate=made(generate_task, "generate"),
        review=made(review_task, "review"),
        validate=made(validate_task, "validate"),
        strengthen=made(strengthen_task, "strengthen") if "strengthen" in kind.stages else None,
    )


@task(name="package")
def package_task(
    kind: str,
    src: SourceResult,
    build: BuildStage | None,
    start: Any,
    suite: Any,
    review: Any,
    verdict: Any,
    settings: Any,
    times: StageTimes,
) -> list[Path]:
    # not cached: it writes the task directories, the thing a resumed run must produce
    return make_kind(kind).package(
        src, build, start, suite, review, verdict, settings, docker_client(), times
    )


@dataclass
class StageLog:
    """What ran and what came from the cache, with wall times, for one build."""

    source: str
    seconds: dict[str, float]
    cached: dict[str, bool]
    remade: list[str]  # cacheable stages that ran: the cache had no (fresh) result for them

    @classmethod
    def start(cls, source: str) -> StageLog:
        return cls(source=source, seconds={}, cached={}, remade=[])

    def times(self) -> StageTimes:
        """What the package stage records of this build so far."""
        reused = tuple(name for name, hit in self.cached.items() if hit)
        return StageTimes(seconds=dict(self.seconds), reused=reused, remade=tuple(self.remade))


def _image_exists(tag: str) -> bool:
    client = docker_client()
    try:
        return image_exists(client, tag)
    finally:
        client.close()


def run_stage(stage_log: StageLog, config: Config, fn: Task[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run one stage task with `args`, typed as the task's function; on a cache hit whose
    result is stale, run it again fresh.

    What the stage raised comes out as a StageError naming it: only this wrapper knows
    which stage was running."""
    start = time.monotonic()
    try:
        with progress.working_on(stage_log.source, fn.name):
            result, cached = _run(stage_log, config, fn, args, kwargs)
        if fn.persist_result and not cached:
            stage_log.remade.append(fn.name)
    except StageError:
        raise
    except TaskfoundryError as exc:
        raise StageError.wrap(fn.name, exc) from exc
    name = fn.name
    stage_log.seconds[name] = time.monotonic() - start
    stage_log.cached[name] = cached
    progress.stage_done(stage_log.source, name, cached, stage_log.seconds[name])
    return cast(R, result)


def _run(
    stage_log: StageLog, config: Config, fn: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, bool]:
    persisted = bool(fn.persist_result)
    resumable = persisted and config.orchestration.resume
    if persisted:
        fn = fn.with_options(result_storage=result_storage(config), refresh_cache=not resumable)
    state = cast(State[Any], fn(*args, **kwargs, return_state=True))
    result = state.result()  # raises the stage's own error when it failed
    cached = state.name == "Cached"
    reason = stale_reason(result, _image_exists, shared_root(config)) if cached else None
    if reason:
        log.warning("%s: cached %s result is stale (%s); running it again", stage_log.source, fn.name, reason)
        return fn.with_options(refresh_cache=True)(*args, **kwargs), False
    if cached and isinstance(getattr(result, "built", None), bool):
        result = result.model_copy(update={"built": False})  # this run built no image
    return result, cached
