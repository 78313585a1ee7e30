"""The build flow: one source through every stage, each a persisted, cached Prefect task."""

from __future__ import annotations

import logging
from pathlib import Path

from prefect import flow

from taskfoundry.config import Config
from taskfoundry.flows.artifacts import publish_task
from taskfoundry.flows.limits import ensure_limits
from taskfoundry.flows.recipes import with_recipe
from taskfoundry.flows.tasks import (
    StageLog,
    build_task,
    cleanroom_task,
    filter_task,
    generate_task,
    lint_task,
    package_task,
    run_stage,
    source_task,
)
from taskfoundry.pipeline import sections
from taskfoundry.pipeline.results import SourceResult

log = logging.getLogger(__name__)


@flow(name="build-task", log_prints=False)
def build_flow(source: str, config: Config) -> Path:
    """Build one task from `source`; returns the task directory.

    Run again after a crash, it resumes after the last stage that finished (see
    `taskfoundry.flows.cache`)."""
    ensure_limits(config)
    stage_log = StageLog.start(source)
    src = run_stage(stage_log, config, source_task, source, config.sources, config.work_dir)
    return build_stages(src, config, stage_log)


def build_stages(src: SourceResult, config: Config, stage_log: StageLog) -> Path:
    """Every stage after the source, for a source already resolved."""
    if config.recipe is not None:
        src = with_recipe(src, config.recipe, config.work_dir)
    build = run_stage(stage_log, config, build_task, src, sections.for_build(config))
    clean = run_stage(stage_log, config, cleanroom_task, src, build, sections.for_cleanroom(config))
    gen = run_stage(stage_log, config, generate_task, src, build, clean, sections.for_generate(config))
    lint = run_stage(stage_log, config, lint_task, gen)
    filt = run_stage(stage_log, config, filter_task, gen, lint, clean, sections.for_filter(config))
    seconds = dict(stage_log.seconds)
    task_dir: Path = run_stage(
        stage_log, config, package_task, src, build, clean, gen, lint, filt, config, seconds
    )
    publish_task(task_dir, stage_log.cached)
    return task_dir


@flow(name="build-resolved", log_prints=False)
def build_resolved_flow(src: SourceResult, config: Config) -> Path:
    """Build a source already resolved and pinned (refresh resolves first, to skip known ones)."""
    stage_log = StageLog.start(src.source)
    return build_stages(src, config, stage_log)
