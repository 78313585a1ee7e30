"""Mutation analysis of a kept suite: sample mutants on covered lines, build and test each.

`analyze` splits the sampled mutants (sorted by file) into one contiguous run per worker
(`pool.WorkerPool`); each worker is its own container of the build image, so rebuilds do not
share a tree.
A mutant that hangs or floods is `timeout` and the analysis goes on; when the wall-time
budget ends, the mutants left are not analysed and the report says `exhausted: time`.
"""

from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from taskfoundry import progress
from taskfoundry.builders.recipe import Recipe
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.models import MutantRecord, MutationReport
from taskfoundry.kinds.program.mutate.pool import WorkerPool
from taskfoundry.kinds.program.mutate.rebuild import rebuild_plan
from taskfoundry.kinds.program.mutate.select import PerTestLines, Planned, plan
from taskfoundry.kinds.program.mutate.worker import MutantWorker
from taskfoundry.kinds.program.settings import MutationConfig

log = logging.getLogger(__name__)


@dataclass
class Done:
    """What a run of planned mutants gave back: records, flaky tests, and whether time ran out."""

    records: list[MutantRecord] = field(default_factory=list)
    unreliable: set[str] = field(default_factory=set)
    out_of_time: bool = False


def analyze(
    image: str,
    recipe: Recipe,
    repo: Path,
    suite: Path,
    kept: list[str],
    per_test_lines: PerTestLines,
    config: MutationConfig,
    harness: EvalConfig,
    deadline: float | None = None,
    pool: WorkerPool | None = None,
) -> MutationReport:
    """Mutation analysis of the kept tests of `suite` (a directory holding eval/) against the
    reference in `image` (a build image: /src built), whose checkout is `repo` on the host;
    the suite runs as the grading harness `harness` runs it. `deadline` (a `time.monotonic`
    instant; None: `max_seconds` from now) ends it. `pool`: the stage's workers, started here
    with the sampled mutants (None: a pool of its own, closed when it returns)."""
    start = time.monotonic()
    meta = {"budget": config.budget, "seed": config.seed}
    if not config.enabled or config.budget == 0:
        why = "disabled (--mutants 0, or mutation budget: 0 or enabled: false in the config)"
        return MutationReport(skipped=why, **meta)
    planned, candidates = plan(
        repo, kept, per_test_lines, tuple(config.operators), config.budget, config.seed
    )
    if not planned:
        why = "no kept test covers a line of first-party source in a supported language"
        return MutationReport(skipped=why, candidates=candidates, **meta)
    deadline = start + config.max_seconds if deadline is None else deadline
    with ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(WorkerPool(image, rebuild_plan(recipe, repo), config, harness))
        pool.start(suite, [p.mutant for p in planned])
        done = run_planned(pool, planned, deadline)
    return MutationReport.from_records(
        done.records,
        candidates=candidates,
        unreliable_tests=sorted(done.unreliable),
        exhausted="time" if done.out_of_time else None,
        seconds=round(time.monotonic() - start, 2),
        **meta,
    )


def run_planned(pool: WorkerPool, planned: list[Planned], deadline: float) -> Done:
    """Every planned mutant against its tests, each on the worker that holds it; records in
    plan order."""
    progress.count("mutants", 0, len(planned))
    done = pool.each(planned, lambda p: p.mutant.id, lambda w, chunk: _work(w, chunk, deadline))
    order = {p.mutant.id: i for i, p in enumerate(planned)}
    return Done(
        records=sorted((r for d in done for r in d.records), key=lambda r: order[r.id]),
        unreliable=set().union(*(d.unreliable for d in done)),
        out_of_time=any(d.out_of_time for d in done),
    )


def _work(worker: MutantWorker, chunk: list[Planned], deadline: float) -> Done:
    done = Done()
    done.unreliable = worker.failing(sorted({t for p in chunk for t in p.tests}))
    usable = [Planned(p.mutant, tuple(t for t in p.tests if t not in done.unreliable)) for p in chunk]
    done.records, done.out_of_time = worker.run_all([p for p in usable if p.tests], deadline)
    return done
