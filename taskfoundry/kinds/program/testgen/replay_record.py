"""The replay dummy's table: the public probes run on the gold in the generate stage's sandbox."""

from __future__ import annotations

from pathlib import Path

from taskfoundry.builders.build import GOLD
from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen.base import GenerationContext
from taskfoundry.kinds.program.testgen.explorer import public_probes_of, public_views, runtime_data
from taskfoundry.kinds.program.testgen.explorer_gen import program_names
from taskfoundry.kinds.program.testgen.probes import RunnerJob, install_runner, run_probes
from taskfoundry.kinds.program.testgen.replay import ReplayTable, replay_table


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
    return replay_table(probes, run_probes(ctx.sandbox, job, probes), cfg.public_seeds).save(path)


def load_replay(path: Path | None) -> ReplayTable | None:
    return ReplayTable.load(path) if path is not None and path.is_file() else None
