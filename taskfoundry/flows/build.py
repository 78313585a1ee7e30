"""The build flow: one source through every stage, each a persisted, cached Prefect task."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from prefect import flow

from taskfoundry import sections
from taskfoundry.config import Config
from taskfoundry.flows import names
from taskfoundry.flows.artifacts import publish_task
from taskfoundry.flows.limits import ensure_limits
from taskfoundry.flows.recipes import with_recipe
from taskfoundry.flows.tasks import StageLog, build_task, kind_tasks, package_task, run_stage, source_task
from taskfoundry.kinds.base import make_kind
from taskfoundry.pipeline.results import SourceResult
from taskfoundry.pipeline.secret import build_seed
from taskfoundry.store import Store

log = logging.getLogger(__name__)


@flow(name="build-task", flow_run_name=names.build_name, log_prints=False)
def build_flow(source: str, config: Config) -> list[Path]:
    """Build the tasks of `source`; returns their directories (the program kind: one).

    Run again after a crash, it resumes after the last stage that finished (see
    `taskfoundry.flows.cache`)."""
    make_kind(config.kind)  # an unknown kind fails before any work
    ensure_limits(config)
    stage_log = StageLog.start(source)
    src = run_stage(stage_log, config, source_task, source, config.sources, config.work_dir)
    return build_stages(src, config, stage_log)


def build_stages(src: SourceResult, config: Config, stage_log: StageLog) -> list[Path]:
    """Every stage after the source, for a source already resolved."""
    if config.recipe is not None:
        src = with_recipe(src, config.recipe, config.work_dir)
    config = with_build_seed(config, src)
    kind, name = make_kind(config.kind), config.kind
    parts = kind_tasks(kind)

    def section(step: str) -> Any:
        return sections.section(config, step)

    # a kind with no program to build (function, feature: a library) skips the shared build stage
    builds = kind.builds_program
    build = run_stage(stage_log, config, build_task, src, sections.for_build(config)) if builds else None
    start = run_stage(stage_log, config, parts.start_state, name, src, build, section("start_state"))
    suite = run_stage(stage_log, config, parts.generate, name, src, build, start, section("generate"))
    review = run_stage(stage_log, config, parts.review, name, suite)
    verdict = run_stage(stage_log, config, parts.validate, name, suite, review, start, section("validate"))
    if parts.strengthen is not None:  # the suite it hands on may hold tests it added
        suite, verdict = run_stage(
            stage_log,
            config,
            parts.strengthen,
            name,
            src,
            build,
            start,
            suite,
            review,
            verdict,
            section("strengthen"),
        )
    times = stage_log.times()
    task_dirs: list[Path] = run_stage(
        stage_log,
        config,
        package_task,
        name,
        src,
        build,
        start,
        suite,
        review,
        verdict,
        section("package"),
        times,
    )
    for task_dir in task_dirs:
        publish_task(task_dir, stage_log.cached)  # first: it writes reports/report.html
        if config.store is not None:  # whole or not at all: its marker goes last
            Store.at(config.store).publish_task(task_dir)
    return task_dirs


def with_build_seed(config: Config, src: SourceResult) -> Config:
    """`config` with the explorer's and the function kind's seeds set: the secret one of this
    build where none is given."""
    unset = {
        name: part
        for name, part in (("explorer", config.explorer), ("function", config.function))
        if part.seed is None
    }
    if not unset:
        return config
    seed = build_seed(config.work_dir, src.task_id)
    return config.model_copy(
        update={name: part.model_copy(update={"seed": seed}) for name, part in unset.items()}
    )


@flow(name="build-resolved", flow_run_name=names.build_resolved_name, log_prints=False)
def build_resolved_flow(src: SourceResult, config: Config) -> list[Path]:
    """Build a source already resolved and pinned (refresh resolves first, to skip known ones)."""
    stage_log = StageLog.start(src.source)
    return build_stages(src, config, stage_log)
