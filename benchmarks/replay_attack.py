"""The no-logic attack on a built program task: what a worker scores without building anything.

    python benchmarks/replay_attack.py out/tasks/<task id> [--per-seed 3000] [--seeds 0,1]

As the worker, in the task's cleanroom image: the explorer's own candidate probes drawn from
the cleanroom's docs with the public default seeds (`--per-seed` each, 6,000 by default in
all), run on /workspace/executable; then, graded through the real grader: a lookup table of
those outcomes by exact call, the same with the argv-only fallback, and with a third tier (the
argv without the names of the files the call was given: ours, beyond the issue's attacker), the
gold's version text for every call, its help text for every call, and a program that does
nothing. The issue's bar (55): exact at most 5%, fallback at most 15% (the shape tier held to
it too), version and help at most 2% each, nothing 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from taskfoundry.errors import ConfigError
from taskfoundry.grading.task import load_task
from taskfoundry.kinds.program.replay_attack import attacker_table, attacks, grade
from taskfoundry.sandbox.docker import docker_client

BAR = {
    "replay_exact": 0.05,
    "replay_fallback": 0.15,
    "replay_shape": 0.15,
    "version": 0.02,
    "help": 0.02,
    "nothing": 0.0,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task_dir", type=Path)
    parser.add_argument("--per-seed", type=int, default=3000)
    parser.add_argument("--seeds", default="0,1")
    args = parser.parse_args()
    try:
        spec = load_task(args.task_dir)
    except ConfigError as exc:
        sys.exit(f"replay_attack: not a task directory: {exc}")
    client = docker_client()
    seeds = [int(s) for s in args.seeds.split(",")]
    start = time.monotonic()
    program = Path(spec.task.executable).name
    table = attacker_table(client, spec.task.images.task_cleanroom, args.per_seed, seeds, program)
    print(
        f"{spec.task_id}: {table.probes} public probes (seeds {seeds}), {len(table.exact)} recorded, "
        f"{len(table.argv)} argv keys, {time.monotonic() - start:.0f}s"
    )
    print(f"{'submission':<16} {'passed':>7} {'tests':>6} {'rate':>7} {'bar':>6}")
    for name, program_bytes in attacks(table).items():
        passed, tests = grade(spec, program_bytes, client)
        rate = passed / tests if tests else 0.0
        ok = "ok" if rate <= BAR.get(name, 1.0) else "OVER"
        print(f"{name:<16} {passed:>7} {tests:>6} {rate:>7.1%} {BAR.get(name, 1.0):>6.0%} {ok}")


if __name__ == "__main__":
    main()
