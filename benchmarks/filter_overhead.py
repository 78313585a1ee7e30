"""The filter's overhead: run_filter (gold x3 + every dummy, a fresh container each) on a suite of
at least 1,000 tests, against the summed wall time of the same pytest runs started by hand in
one warm container.

    .venv/bin/python benchmarks/filter_overhead.py [--copies 4] [--out DIR]

The suite is the csvq explorer branch, its modules copied `--copies` times (distinct module
names, so distinct JUnit names).
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from taskfoundry import sections
from taskfoundry.config import Config
from taskfoundry.kinds.program.cleanroom.stage import cleanroom_stage
from taskfoundry.kinds.program.filter.dummies import render_dummy
from taskfoundry.kinds.program.filter.run import Grader, run_filter
from taskfoundry.kinds.program.testgen.stage import generate_stage
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox, docker_client

ROOT = Path(__file__).resolve().parents[1]


def big_suite(suite: Path, dest: Path, copies: int) -> list[str]:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(suite, dest)
    tests = dest / "eval" / "tests"
    originals = sorted(tests.glob("test_*.py"))
    for i in range(1, copies):
        for path in originals:
            shutil.copy(path, tests / f"{path.stem}_c{i}.py")
    names = []
    for path in sorted(tests.glob("test_*.py")):
        for line in path.read_text().splitlines():
            if line.startswith("def test_"):
                names.append(f"eval.tests.{path.stem}.{line[4:].split('(')[0]}")
    return names


def by_hand(client, image: str, suite: Path, variants: list[bytes | None]) -> float:  # type: ignore[no-untyped-def]
    """Summed wall time of the same runs in one warm container (no per-run container set-up)."""
    total = 0.0
    with DockerSandbox(image, SandboxLimits(pids=1024), workdir="/workspace", client=client) as box:
        box.put_dir(suite / "eval", "/workspace/eval")
        box.exec(["chown", "-R", "1000:1000", "/workspace/eval"], timeout=60, user="0:0")
        for exe in variants:
            if exe is not None:
                box.put_file(exe, "/workspace/executable", mode=0o755)
            start = time.monotonic()
            box.exec(["sh", "eval/run.sh", "-n", "2"], timeout=3600)
            total += time.monotonic() - start
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-filter"))
    args = parser.parse_args()
    client = docker_client()
    config = Config(out=args.out)
    src = source_stage(str(ROOT / "examples" / "csvq"), config.sources, config.work_dir)
    build = build_stage(src, sections.for_build(config), client)
    clean = cleanroom_stage(src, build, sections.for_cleanroom(config), client)
    gen = generate_stage(src, build, clean, sections.for_generate(config), client)
    suite = args.out / "big-suite"
    names = big_suite(gen.suite, suite, args.copies)
    usage = clean.usage.get("", "")
    start = time.monotonic()
    grader = Grader.load(client, clean.image, suite, config.eval)
    result = run_filter(grader, names, usage, config.filter)
    filter_secs = time.monotonic() - start
    dummies = [render_dummy(d, usage) for d in config.filter.dummies]
    hand_secs = by_hand(client, clean.image, suite, [None] * config.filter.gold_runs + dummies)
    print(
        f"tests: {len(names)}  kept: {len(result.kept)}  runs: "
        f"{config.filter.gold_runs} gold + {len(dummies)} dummies"
    )
    print(
        f"filter: {filter_secs:.1f} s  by hand in one warm container: {hand_secs:.1f} s  "
        f"overhead ratio: {filter_secs / hand_secs:.2f}"
    )


if __name__ == "__main__":
    main()
