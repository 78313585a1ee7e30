"""The replay dummy's table: the public probes run on the gold in the generate stage's sandbox."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from taskfoundry.builders.build import GOLD
from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen.base import GenerationContext
from taskfoundry.kinds.program.testgen.explorer import CANARY, public_probes_of, public_views, runtime_data
from taskfoundry.kinds.program.testgen.explorer_gen import program_names
from taskfoundry.kinds.program.testgen.probes import RunnerJob, install_runner, run_probes
from taskfoundry.kinds.program.testgen.replay import ReplayTable, replay_table

log = logging.getLogger(__name__)


def record_replay(ctx: GenerationContext, cfg: ExplorerConfig, path: Path) -> Path | None:
    """The gold's outcomes on the first `replay_probes` public probes of each public seed,
    saved at `path` (None: no replay dummy is asked for)."""
    if cfg.replay_probes <= 0 or not cfg.public_seeds:
        return None
    install_runner(ctx.sandbox)
    data = runtime_data(ctx.sandbox)
    # as a worker draws them: from the cleanroom's docs where the stage has them
    views = [
        v for v in public_views(ctx.repo, data, ctx.public_view) if v[0] == (ctx.public_view or ctx.repo)
    ]
    probes = public_probes_of(cfg, views, program_names(ctx), ctx.usage, cfg.replay_probes)
    job = RunnerJob(executable=GOLD, timeout=cfg.probe_timeout, parallel=cfg.parallel, argv0=ctx.argv0)
    # the table is recorded before exploring: a gold that hangs would take every probe's
    # timeout (2,000 × 5 s) before the explorer's own canary could say so
    head = run_probes(ctx.sandbox, job, probes[:CANARY])
    if head and all(out.timed_out for out in head):  # slow, or hanging: the explorer's way
        job = dataclasses.replace(job, timeout=cfg.slow_probe_timeout)
        head = run_probes(ctx.sandbox, job, probes[:CANARY])
    if head and all(out.timed_out for out in head):
        log.info("no replay table: the gold's first %d public probes all timed out", len(head))
        return None
    outcomes = head + run_probes(ctx.sandbox, job, probes[CANARY:])
    return replay_table(probes, outcomes, cfg.public_seeds).save(path)


def load_replay(path: Path | None) -> ReplayTable | None:
    return ReplayTable.load(path) if path is not None and path.is_file() else None
