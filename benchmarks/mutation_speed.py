"""Mutation analysis with mutant schemata beside the per-mutant rebuild, on the same mutants:
stage seconds against the generate and filter stages of the same build, the cost of one
mutant (build, tests), and whether the two ways agree on every mutant both ran.

    .venv/bin/python benchmarks/mutation_speed.py [SOURCE ...] [--budget 200] [--json FILE]

SOURCE: a path, `debian:PKG` or `crate:NAME` (default: the three program examples). Runs the
stage functions directly (no Prefect). The filter runs both ways (one container and one
pytest session per run; the runs as rounds of one session a container) and the kept tests
and drop reasons are compared. Mutation: each way is the first analysis only (no guided
step), on the same sampled mutants (`--rebuild-sample N`: the rebuild way on every k-th of
them only, for programs whose rebuilds take long); then the whole mutation stage
(first analysis, guided step, second analysis) runs as a build runs it.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from taskfoundry import sections
from taskfoundry.config import Config
from taskfoundry.errors import TaskfoundryError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.kind import ProgramKind
from taskfoundry.kinds.program.mutate.analyze import Done, analyze, run_planned
from taskfoundry.kinds.program.mutate.models import MutantRecord
from taskfoundry.kinds.program.mutate.pool import WorkerPool
from taskfoundry.kinds.program.mutate.rebuild import RebuildPlan, rebuild_plan
from taskfoundry.kinds.program.mutate.select import Planned, plan
from taskfoundry.kinds.program.settings import MutationConfig
from taskfoundry.models import DropRecord
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import docker_client

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [str(ROOT / "examples" / name) for name in ("csvq", "rcalc", "logsum")]
HEAD = (
    "| task | generate s | filter s: runs → rounds (same kept and drops) | first analysis s: rebuild way "
    "(mutants) → schemata | stage s (guided) | build s/mutant old→new | tests s/mutant old→new | "
    "way schema/rebuild | agree | score: rebuild way → schemata on the same mutants → schemata, "
    "all → after guided |"
)


def _mean(values: list[float]) -> float:
    return statistics.mean(values) if values else 0.0


def _rebuild_way(
    image: str,
    rebuild: RebuildPlan,
    suite: Path,
    planned: list[Planned],
    config: MutationConfig,
    harness: EvalConfig,
    deadline: float,
) -> Done:
    with WorkerPool(image, rebuild, config, harness) as pool:
        pool.start(suite, [p.mutant for p in planned])
        return run_planned(pool, planned, deadline)


def _score(records: list[MutantRecord]) -> float | None:
    scored = [r for r in records if r.status in ("killed", "survived")]
    return sum(r.status == "killed" for r in scored) / len(scored) if scored else None


def _timed(fn: Any, *args: Any) -> tuple[Any, float]:
    start = time.monotonic()
    out = fn(*args)
    return out, time.monotonic() - start


def compare(old: list[MutantRecord], new: list[MutantRecord]) -> tuple[int, list[str]]:
    """How many mutants both ran agree on (killed / survived / timeout), and each that does not."""
    verdicts = ("killed", "survived", "timeout")
    before = {r.id: r for r in old}
    agree, differ = 0, []
    for rec in new:
        was = before.get(rec.id)
        if was is None or was.status not in verdicts or rec.status not in verdicts:
            continue
        if was.status == rec.status:
            agree += 1
        else:
            differ.append(
                f"{rec.file}:{rec.line} {rec.original!r}->{rec.replacement!r}: {was.status} vs {rec.status}"
            )
    return agree, differ


def measure(source: str, config: Config, rebuild_sample: int) -> dict[str, Any]:
    client, kind = docker_client(), ProgramKind()
    src = source_stage(source, config.sources, config.work_dir)
    build = build_stage(src, sections.for_build(config), client)
    clean = kind.start_state(src, build, sections.for_cleanroom(config), client)
    gen, gen_s = _timed(kind.generate, src, build, clean, sections.for_generate(config), client)
    lint = kind.review(gen)
    filt, filt_s = _timed(kind.validate, gen, lint, clean, sections.for_filter(config), client)
    runs_config = config.model_copy(
        update={"filter": config.filter.model_copy(update={"one_session": False})}
    )
    filt_old, filt_old_s = _timed(kind.validate, gen, lint, clean, sections.for_filter(runs_config), client)
    same_filter = filt.kept == filt_old.kept and _reasons(filt.dropped) == _reasons(filt_old.dropped)
    mutate = sections.for_mutate(config)
    harness, cfg = mutate.filter.harness, mutate.mutation.model_copy(update={"guided": False})
    args = (build.image, build.recipe, src.path, gen.suite, filt.kept, gen.per_test_lines, cfg, harness)
    new, new_s = _timed(analyze, *args)
    # the per-mutant rebuild on the same mutants (every k-th of them with --rebuild-sample)
    planned, _ = plan(src.path, filt.kept, gen.per_test_lines, tuple(cfg.operators), cfg.budget, cfg.seed)
    step = max(1, len(planned) // rebuild_sample) if rebuild_sample else 1
    old_cfg = cfg.model_copy(update={"schemata": False})
    deadline = time.monotonic() + cfg.max_seconds
    old, old_s = _timed(
        _rebuild_way,
        build.image,
        rebuild_plan(build.recipe),
        gen.suite,
        planned[::step],
        old_cfg,
        harness,
        deadline,
    )
    agree, differ = compare(old.records, new.records)
    _, verdict = kind.strengthen(src, build, clean, gen, lint, filt, mutate, client)
    report = verdict.mutation
    guided = report.guided if report else None
    ways = [r.way for r in new.records]
    return {
        "task": src.task_id,
        "generate_seconds": gen_s,
        "filter_seconds": filt_s,
        "filter_runs_seconds": filt_old_s,
        "same_filter": same_filter,
        "kept": len(filt.kept),
        "rebuild_way_seconds": old_s,
        "rebuild_way_mutants": len(old.records),
        "schemata_seconds": new_s,
        "stage_seconds": report.seconds if report else 0.0,
        "stage_mutants": report.mutants if report else 0,
        "guided": guided.model_dump() if guided else None,
        "build_mean": [
            _mean([r.build_seconds for r in old.records]),
            _mean([r.build_seconds for r in new.records]),
        ],
        "tests_mean": [
            _mean([r.test_seconds for r in old.records]),
            _mean([r.test_seconds for r in new.records]),
        ],
        "ways": [ways.count("schema"), ways.count("rebuild")],
        "agree": agree,
        "differ": differ,
        "score": [
            _score(old.records),
            _score([r for r in new.records if r.id in {o.id for o in old.records}]),
            new.score,
            report.score if report else None,
        ],
        "counts_new": [new.killed, new.survived, new.timeout, new.build_failed, new.equivalent],
        # why the mutants the schemata could not hold were rebuilt alone
        "rebuilt_why": Counter(
            re.sub(r"\(.*?\)", "(...)", (r.detail or "")[:90]) for r in new.records if r.way == "rebuild"
        ).most_common(6),
    }


def _reasons(dropped: dict[str, list[DropRecord]]) -> dict[str, list[str]]:
    return {t: [d.id for d in ds] for t, ds in sorted(dropped.items())}


def row(m: dict[str, Any]) -> str:
    score = " → ".join("n/a" if s is None else f"{s:.1%}" for s in m["score"])
    both = m["agree"] + len(m["differ"])
    guided = m["guided"]["seconds"] if m["guided"] else 0.0
    return (
        f"| {m['task']} | {m['generate_seconds']:.0f} | {m['filter_runs_seconds']:.0f} → "
        f"{m['filter_seconds']:.0f} ({'yes' if m['same_filter'] else 'NO'}, {m['kept']} kept) | "
        f"{m['rebuild_way_seconds']:.0f} ({m['rebuild_way_mutants']}) → {m['schemata_seconds']:.0f} | "
        f"{m['stage_seconds']:.0f} ({guided:.0f}) | {m['build_mean'][0]:.2f} → {m['build_mean'][1]:.2f} | "
        f"{m['tests_mean'][0]:.2f} → {m['tests_mean'][1]:.2f} | {m['ways'][0]}/{m['ways'][1]} | "
        f"{m['agree']}/{both} | {score} |"
    )


def _guided_parts(guided: dict[str, Any] | None) -> str:
    """The guided step's parts: where its seconds went, where its candidates came from."""
    if not guided:
        return "none"
    seconds = ("explore", "search", "filter", "analysis")
    counts = ("candidates", "spare_candidates", "probes_run", "killers", "tests_added")
    return ", ".join(
        [*(f"{k} {guided[k + '_seconds']:.1f} s" for k in seconds), *(f"{k} {guided[k]}" for k in counts)]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sources", nargs="*", default=DEFAULT)
    parser.add_argument("--budget", type=int, default=200, help="mutants per program")
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-mutation"))
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument(
        "--rebuild-sample", type=int, default=0, help="rebuild only about this many of the mutants (0: all)"
    )
    args = parser.parse_args()
    config = Config(out=args.out)
    config.mutation.budget = args.budget
    print(HEAD)
    print("|" + "---|" * HEAD.count(" | ") + "---|")
    results = []
    for source in args.sources:
        try:
            results.append(measure(source, config, args.rebuild_sample))
            print(row(results[-1]), flush=True)
            for line in results[-1]["differ"]:
                print(f"  differs: {line}", file=sys.stderr)
            print(f"  guided: {_guided_parts(results[-1]['guided'])}", file=sys.stderr)
        except TaskfoundryError as exc:
            print(f"| {source} | failed: {exc} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
