"""Suite strength of each example (and any other SOURCE: a path, `debian:PKG`, `crate:NAME`):
kept tests, first-party line coverage, mutation score, explorer and mutation seconds.

    .venv/bin/python benchmarks/strength.py [SOURCE ...] [--budget 200] [--workers 2]
        [--max-probes 600] [--out DIR] [--json FILE]

Runs the stage functions directly (no Prefect): source, build, cleanroom, generate, lint,
filter, mutation. Images are reused by tag, so only the first run of a source pays for its
build. The mutation columns time the whole analysis (setup, the reference rebuilt and the
suite run on it once, then every mutant) and split a mutant's time into rebuild and tests.
Each mutation report is kept as <out>/work/mutation/<task id>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from taskfoundry.config import Config
from taskfoundry.errors import TaskfoundryError
from taskfoundry.models import save_json
from taskfoundry.pipeline import stages
from taskfoundry.pipeline.mutate import mutation_stage
from taskfoundry.sandbox.docker import docker_client

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [str(ROOT / "examples" / name) for name in ("csvq", "rcalc", "logsum")]
HEAD = (
    "| task | lang | kept tests | line coverage | mutation score | killed / survived / timeout / "
    "build failed / equivalent | explorer s | mutation s | mean rebuild s | mean tests s | load |"
)


def measure(source: str, config: Config) -> dict[str, Any]:
    client = docker_client()
    src = stages.source_stage(source, config)
    build = stages.build_stage(src, config, client)
    clean = stages.cleanroom_stage(src, build, config, client)
    gen = stages.generate_stage(src, build, config, client)
    lint = stages.lint_stage(gen)
    filt = stages.filter_stage(gen, lint, clean, config, client)
    start = time.monotonic()
    report = mutation_stage(src, build, gen, filt, config.mutation)
    seconds = time.monotonic() - start
    save_json(config.work_dir / "mutation" / f"{src.task_id}.json", report)
    built = [r for r in report.records if r.status != "build_failed"]
    return {
        "task": src.task_id,
        "language": build.recipe.language,
        "kept": len(filt.kept),
        "line_rate": filt.coverage.line_rate,
        "score": report.score,
        "counts": [report.killed, report.survived, report.timeout, report.build_failed, report.equivalent],
        "mutants": report.mutants,
        "candidates": report.candidates,
        "skipped": report.skipped,
        "explorer_seconds": gen.explorer_seconds,
        "mutation_seconds": seconds,
        "rebuild_mean": statistics.mean(r.build_seconds for r in report.records) if report.records else 0.0,
        "tests_mean": statistics.mean(r.test_seconds for r in built) if built else 0.0,
        "load": os.getloadavg()[0],
    }


def row(m: dict[str, Any]) -> str:
    score = "n/a" if m["score"] is None else f"{m['score']:.1%}"
    if m["skipped"]:
        score = f"skipped: {m['skipped'][:60]}"
    counts = " / ".join(str(c) for c in m["counts"])
    return (
        f"| {m['task']} | {m['language']} | {m['kept']} | {m['line_rate']:.1%} | {score} | {counts} "
        f"(of {m['mutants']}; {m['candidates']} candidates) | {m['explorer_seconds']:.0f} | "
        f"{m['mutation_seconds']:.0f} | {m['rebuild_mean']:.2f} | {m['tests_mean']:.2f} | {m['load']:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sources", nargs="*", default=DEFAULT)
    parser.add_argument("--budget", type=int, default=200, help="mutants per program")
    parser.add_argument("--workers", type=int, default=2, help="mutation containers at once")
    parser.add_argument("--max-probes", type=int, default=600)
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-strength"))
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    config = Config(out=args.out)
    config.explorer.max_probes = args.max_probes
    config.mutation.budget = args.budget
    config.mutation.workers = args.workers
    print(HEAD)
    print("|" + "---|" * HEAD.count(" | ") + "---|")
    results = []
    for source in args.sources:
        try:
            results.append(measure(source, config))
            print(row(results[-1]), flush=True)
        except TaskfoundryError as exc:
            print(f"| {source} | failed: {exc} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
