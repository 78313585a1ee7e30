"""Mutation analysis of a kept suite: sample mutants on covered lines, build and test each.

`analyze` splits the sampled mutants (sorted by file) into one contiguous run per worker;
each worker is its own container of the build image, so rebuilds do not share a tree.
A mutant that hangs or floods is `timeout` and the analysis goes on; when the wall-time
budget ends, the mutants left are not analysed and the report says `exhausted: time`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from taskfoundry.builders.recipe import Recipe
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.models import MutantRecord, MutationReport
from taskfoundry.kinds.program.mutate.rebuild import RebuildPlan, rebuild_plan
from taskfoundry.kinds.program.mutate.select import PerTestLines, Planned, plan
from taskfoundry.kinds.program.mutate.worker import MutantWorker
from taskfoundry.kinds.program.settings import MutationConfig
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox, docker_client

log = logging.getLogger(__name__)
LIMITS = SandboxLimits(memory_mb=2048, pids=1024, output_bytes=16 * 1024 * 1024)


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
) -> MutationReport:
    """Mutation analysis of the kept tests of `suite` (a directory holding eval/) against the
    reference in `image` (a build image: /src built), whose checkout is `repo` on the host;
    the suite runs as the grading harness `harness` runs it. `deadline` (a `time.monotonic`
    instant; None: `max_seconds` from now) ends it."""
    start = time.monotonic()
    meta = {"budget": config.budget, "seed": config.seed}
    if not config.enabled or config.budget == 0:
        return MutationReport(skipped="disabled in the config (enabled: false or budget: 0)", **meta)
    planned, pool = plan(repo, kept, per_test_lines, tuple(config.operators), config.budget, config.seed)
    if not planned:
        why = "no kept test covers a line of first-party source in a supported language"
        return MutationReport(skipped=why, candidates=pool, **meta)
    deadline = start + config.max_seconds if deadline is None else deadline
    done = run_planned(image, rebuild_plan(recipe), suite, planned, config, harness, deadline)
    return MutationReport.from_records(
        done.records,
        candidates=pool,
        unreliable_tests=sorted(done.unreliable),
        exhausted="time" if done.out_of_time else None,
        seconds=round(time.monotonic() - start, 2),
        **meta,
    )


T = TypeVar("T")


def split_evenly(items: list[T], workers: int) -> list[list[T]]:
    """Contiguous runs of about equal size: each worker mostly rebuilds one file after another."""
    n = max(1, min(workers, len(items)))
    size, extra = divmod(len(items), n)
    chunks, at = [], 0
    for i in range(n):
        end = at + size + (1 if i < extra else 0)
        chunks.append(items[at:end])
        at = end
    return chunks


@contextmanager
def worker_box(image: str) -> Iterator[DockerSandbox]:
    """A container of `image` for one worker thread, with its own client (docker-py's client
    is not shared across threads)."""
    client = docker_client()
    try:
        with DockerSandbox(image, LIMITS, client=client, labels={"taskfoundry.stage": "mutation"}) as box:
            yield box
    finally:
        client.close()


def run_planned(
    image: str,
    rebuild: RebuildPlan,
    suite: Path,
    planned: list[Planned],
    config: MutationConfig,
    harness: EvalConfig,
    deadline: float,
) -> Done:
    """Every planned mutant against its tests, in worker containers; records in plan order."""
    chunks = split_evenly(planned, config.workers)

    def work(chunk: list[Planned]) -> Done:
        return _work(image, rebuild, suite, chunk, config, harness, deadline)

    with ThreadPoolExecutor(len(chunks), thread_name_prefix="mutation") as pool:
        done = list(pool.map(work, chunks))
    return Done(
        records=[r for d in done for r in d.records],
        unreliable=set().union(*(d.unreliable for d in done)),
        out_of_time=any(d.out_of_time for d in done),
    )


def _work(
    image: str,
    rebuild: RebuildPlan,
    suite: Path,
    chunk: list[Planned],
    config: MutationConfig,
    harness: EvalConfig,
    deadline: float,
) -> Done:
    done = Done()
    with worker_box(image) as box:
        worker = MutantWorker(box, rebuild, config, harness)
        worker.setup(suite, [p.mutant for p in chunk])
        done.unreliable = worker.failing(sorted({t for p in chunk for t in p.tests}))
        usable = [Planned(p.mutant, tuple(t for t in p.tests if t not in done.unreliable)) for p in chunk]
        done.records, done.out_of_time = worker.run_all([p for p in usable if p.tests], deadline)
    return done
