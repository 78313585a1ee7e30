"""Function tasks (Code2Bench kind) from real PyPI packages: the yield of every stage, branch
coverage of every accepted task, each reference solution's score (must be 1.0) and an empty
submission's (must be 0), and CPU per accepted task.

    .venv/bin/python benchmarks/function_tasks.py [--out DIR] [pypi:NAME==VERSION ...]

CPU per task counts this process (the stages' host side) and the sandbox processes that ran
the references (explore and gate, read from inside the container); the Docker daemon, the
one-time image build and the grading runs are not counted.
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import shutil
import tarfile
import time
from pathlib import Path

import yaml
from prefect.testing.utilities import prefect_test_harness

from taskfoundry.config import Config
from taskfoundry.evaluate.run import evaluate_run
from taskfoundry.flows.build import build_flow
from taskfoundry.grading.config import EvalConfig

PACKAGES = ["pypi:boltons==26.2.0", "pypi:more-itertools==11.2.1", "pypi:python-stdnum==2.2"]
STAGES = ["candidates", "dependencies", "sc", "wsc", "testable", "explored", "accepted"]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def empty_tarball() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz"):
        pass
    return buf.getvalue()


def grade(task_dirs: list[Path], run_dir: Path, tasks: Path, which: str) -> dict[str, float]:
    """pass rate per task of the reference solutions (which=solution) or empty submissions."""
    shutil.rmtree(run_dir, ignore_errors=True)
    for task_dir in task_dirs:
        dest = run_dir / task_dir.name / "submission.tar.gz"
        dest.parent.mkdir(parents=True)
        if which == "solution":
            shutil.copy(task_dir / "solution.tar.gz", dest)
        else:
            dest.write_bytes(empty_tarball())
    summary = evaluate_run(run_dir, tasks, EvalConfig(workers=2))
    return {s.task_id: s.pass_rate for s in summary.tasks}


def one(source: str, out: Path) -> dict[str, object]:
    shutil.rmtree(out, ignore_errors=True)
    start, cpu0 = time.monotonic(), cpu()
    task_dirs = build_flow(source, Config(out=out, kind="function"))
    wall, host_cpu = time.monotonic() - start, cpu() - cpu0
    (report,) = list((out / "reports").glob("*/yield.json"))
    table = json.loads(report.read_text())
    sandbox = sum(table["sandbox_cpu_seconds"].values())
    rates = [yaml.safe_load((d / "task.yaml").read_text())["branch_rate"] for d in task_dirs]
    tasks = out / "tasks"
    solved = grade(task_dirs, out / "runs" / "solution", tasks, "solution")
    empty = grade(task_dirs, out / "runs" / "empty", tasks, "empty")
    accepted = max(len(task_dirs), 1)
    return {
        "source": source,
        **{k: table[k] for k in STAGES},
        "dropped": table["dropped"],
        "full_branch_coverage": sum(1 for r in rates if r == 1.0),
        "solution_1.0": sum(1 for r in solved.values() if r == 1.0),
        "empty_0": sum(1 for r in empty.values() if r == 0.0),
        "wall_s": round(wall, 1),
        "cpu_min_per_task": round((host_cpu + sandbox) / 60 / accepted, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sources", nargs="*", default=PACKAGES)
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-function"))
    args = parser.parse_args()
    rows = []
    with prefect_test_harness(server_startup_timeout=120):
        for i, source in enumerate(args.sources):
            rows.append(one(source, args.out / str(i)))
    cols = [*STAGES, "full_branch_coverage", "solution_1.0", "empty_0", "wall_s", "cpu_min_per_task"]
    print("| source | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for row in rows:
        print(f"| {row['source']} | " + " | ".join(str(row[c]) for c in cols) + " |")
    for row in rows:
        print(f"{row['source']} dropped: {row['dropped']}")


if __name__ == "__main__":
    main()
