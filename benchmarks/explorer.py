"""The explorer on each example (and any other SOURCE given): tests kept, first-party line
coverage, dummy pass rate before filtering, time.

    .venv/bin/python benchmarks/explorer.py [SOURCE ...] [--max-probes N] [--out DIR]

Runs the stage functions directly (no Prefect): source, build, cleanroom, generate, lint,
filter. Images are reused by tag, so only the first run of a source pays for its build.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from taskfoundry import sections
from taskfoundry.config import Config
from taskfoundry.errors import TaskfoundryError
from taskfoundry.kinds.program.cleanroom.stage import cleanroom_stage
from taskfoundry.kinds.program.filter.stage import filter_stage
from taskfoundry.kinds.program.lint import lint_stage
from taskfoundry.kinds.program.testgen.stage import generate_stage
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import docker_client

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [str(ROOT / "examples" / name) for name in ("csvq", "rcalc", "logsum")]


def measure(source: str, config: Config) -> str:
    client = docker_client()
    src = source_stage(source, config.sources, config.work_dir)
    build = build_stage(src, sections.for_build(config), client)
    clean = cleanroom_stage(src, build, sections.for_cleanroom(config), client)
    start = time.monotonic()
    gen = generate_stage(src, build, clean, sections.for_generate(config), client)
    gen_secs = time.monotonic() - start
    lint = lint_stage(gen)
    filt = filter_stage(gen, lint, clean, sections.for_filter(config), client)
    reasons = Counter(r.id for records in filt.dropped.values() for r in records)
    drops = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none"
    return (
        f"| {src.task_id} | {build.recipe.language} | {gen.probes_run} | {gen.generated} | "
        f"{len(filt.kept)} | {drops} | {gen.coverage.line_rate:.1%} | {filt.coverage.line_rate:.1%} | "
        f"{filt.dummy_pass_rate:.1%} | {gen_secs:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sources", nargs="*", default=DEFAULT)
    parser.add_argument("--max-probes", type=int, default=600)
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-explorer"))
    args = parser.parse_args()
    config = Config(out=args.out)
    config.explorer.max_probes = args.max_probes
    print(
        "| task | lang | probes | generated | kept | dropped (reason count) | coverage (generated) "
        "| coverage (kept) | dummy pass before filter | explore s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for source in args.sources:
        try:
            print(measure(source, config), flush=True)
        except TaskfoundryError as exc:
            print(f"| {source} | | | | | | | | | failed: {exc} |", flush=True)


if __name__ == "__main__":
    main()
