"""Evaluator wall time per task: the gold submission on the csvq task, graded N times.

    taskfoundry build examples/csvq --out /tmp/evalwork/out --max-probes 200   # once
    python benchmarks/eval_time.py --tasks /tmp/evalwork/out/tasks             # 5 runs
    python benchmarks/eval_time.py --tasks out/tasks --runs 10 --pytest-workers 1

The submission is the example's source with the task's build.sh as compile.sh (what a
perfect solver would hand in). Reports the wall time of `evaluate_task` per run, and how
it splits between the compile container and the branch containers.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.grading.summary import score_task
from taskfoundry.grading.task import TaskSpec, evaluate_task, load_task
from taskfoundry.sandbox.docker import docker_client

ROOT = Path(__file__).resolve().parents[1]


def gold_submission(spec: TaskSpec, source: Path, dest: Path) -> Path:
    with tarfile.open(dest, "w:gz") as tar:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                tar.add(str(path), arcname=path.relative_to(source).as_posix())
        data = (spec.task_dir / "build.sh").read_bytes()
        info = tarfile.TarInfo("compile.sh")
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
    return dest


def phases(result: EvaluationResult) -> tuple[float, float, float]:
    """(compile-container steps, branch steps, of which run_tests) in seconds."""
    compile_s = sum(s.wall_time for s in result.log if s.branch is None)
    branch_s = sum(s.wall_time for s in result.log if s.branch is not None)
    tests_s = sum(s.wall_time for s in result.log if s.step == "run_tests")
    return compile_s, branch_s, tests_s


def find_task(tasks: Path, name: str) -> Path:
    matches = sorted(p for p in tasks.iterdir() if name in p.name and (p / "task.yaml").exists())
    if not matches:
        raise SystemExit(f"no task matching {name!r} in {tasks}: build one first (see --help)")
    return matches[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=ROOT / "out" / "tasks", help="tasks directory")
    parser.add_argument("--task", default="csvq", help="part of the task id")
    parser.add_argument("--source", type=Path, default=ROOT / "examples" / "csvq")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pytest-workers", type=int, default=EvalConfig().pytest_workers)
    args = parser.parse_args(argv)
    spec = load_task(find_task(args.tasks, args.task))
    config = EvalConfig(pytest_workers=args.pytest_workers, attempts=1)
    client = docker_client()
    walls: list[float] = []
    with tempfile.TemporaryDirectory(prefix="eval-bench-") as tmp:
        sub = gold_submission(spec, args.source, Path(tmp) / "submission.tar.gz")
        for i in range(args.runs):
            start = time.perf_counter()
            result = evaluate_task(spec, sub, config, client)
            walls.append(time.perf_counter() - start)
            rate = score_task(
                spec.task_id, {b: spec.expected(b) for b in spec.branches}, result, config.near_resolved
            ).pass_rate
            if result.error_code or rate != 1.0:
                sys.stderr.write(f"run {i}: gold scored {rate:.1%} ({result.error_code})\n")
                return 1
            c, b, t = phases(result)
            sys.stdout.write(
                f"run {i + 1}: {walls[-1]:.2f} s (compile container {c:.2f} s, "
                f"{len(spec.branches)} branch(es) {b:.2f} s, "
                f"of which run_tests {t:.2f} s)\n"
            )
    client.close()
    tests = sum(len(spec.expected(b)) for b in spec.branches)
    sys.stdout.write(
        f"{spec.task_id}: {tests} tests, gold 100%; evaluator wall time per task over {args.runs} runs: "
        f"median {statistics.median(walls):.2f} s, min {min(walls):.2f} s, max {max(walls):.2f} s "
        f"(host load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
