"""mutation_stage: the kept suite against mutants of the reference (after filter, before package)."""

from __future__ import annotations

import logging

from taskfoundry.errors import SandboxError, StageError
from taskfoundry.mutation.analyze import analyze
from taskfoundry.mutation.models import MutationConfig, MutationReport
from taskfoundry.mutation.worker import MutationError
from taskfoundry.pipeline.results import BuildStage, FilterStage, GenerateStage, SourceResult

log = logging.getLogger(__name__)


def mutation_stage(
    src: SourceResult, build: BuildStage, gen: GenerateStage, filt: FilterStage, config: MutationConfig
) -> MutationReport:
    """reports/mutation.json of one task. A task the analysis cannot run on gets a report that
    says why (`skipped`), not a failed build; a failing Docker engine fails the stage."""
    meta = {"budget": config.budget, "seed": config.seed}
    if filt.branch_error is not None:
        return MutationReport(skipped=f"the branch is marked: {filt.branch_error}", **meta)
    if not filt.kept:
        return MutationReport(skipped="no kept tests", **meta)
    try:
        return analyze(build.image, build.recipe, src.path, gen.suite, filt.kept, gen.per_test_lines, config)
    except MutationError as exc:
        log.warning("%s: no mutation analysis: %s", src.task_id, exc)
        return MutationReport(skipped=str(exc), **meta)
    except SandboxError as exc:
        raise StageError("mutation", f"infrastructure failure: {exc}") from exc
