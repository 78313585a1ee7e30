"""Seconds a probe takes on a build image: the gold, and the coverage build with its reading.

    .venv/bin/python benchmarks/probe_speed.py IMAGE --coverage llvm [--probes 40] [ARG ...]

IMAGE is a build image (`docker images 'taskfoundry/build-*'`): the gold at builders.build's GOLD,
the coverage build at COVERAGE. Each probe runs the program with the ARGs (`--help` unless given)
in its own directory, as the explorer runs it, in one sandbox exec of `--probes` probes. The
coverage probes' time includes reading their coverage (llvm: profdata merge and llvm-cov export).
"""

from __future__ import annotations

import argparse
import time

from taskfoundry.builders.build import COV_ROOT, COVERAGE, GOLD
from taskfoundry.kinds.program.testgen.probes import Probe, RunnerJob, install_runner, run_probes
from taskfoundry.sandbox.docker import DockerSandbox, docker_client


def per_probe(box: DockerSandbox, job: RunnerJob, probes: list[Probe]) -> tuple[float, int]:
    """Seconds a probe, and how many first-party lines the probes covered."""
    start = time.monotonic()
    outcomes = run_probes(box, job, probes)
    seconds = (time.monotonic() - start) / len(probes)
    return seconds, sum(len(lines) for lines in outcomes[0].covered.values())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("image")
    parser.add_argument("--coverage", required=True, choices=["gcov", "llvm", "go", "python"])
    parser.add_argument("--probes", type=int, default=40)
    parser.add_argument("args", nargs="*")
    args = parser.parse_intermixed_args()
    probes = [Probe(tuple(args.args or ["--help"]))] * args.probes
    with DockerSandbox(args.image, client=docker_client()) as box:
        install_runner(box)
        gold, _ = per_probe(box, RunnerJob(executable=GOLD), probes)
        cov, lines = per_probe(
            box, RunnerJob(executable=COVERAGE, coverage=args.coverage, cov_root=COV_ROOT), probes
        )
    print(f"{args.image}: {len(probes)} probes of {' '.join(probes[0].args)!r}")
    print(
        f"gold: {gold:.3f} s a probe; coverage build: {cov:.3f} s a probe ({lines} first-party lines covered)"
    )


if __name__ == "__main__":
    main()
