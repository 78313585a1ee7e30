"""Feature tasks against every attack class: each level-1 start state rewritten into each attack
(taskfoundry.kinds.feature.attacks, by script), graded by the real grader in Docker with the
defences on (and, with --undefended, off), next to the reference, the start state and an empty
submission.

    python benchmarks/feature_attacks.py /tmp/featout/tasks [--undefended] [--attacks a,b]

Prints a markdown table: per task, whether the reference / start state / empty submission
resolve, then per attack `F2P passed/F2P total` and R when it resolved; and the mean grading
time of a submission.
"""

from __future__ import annotations

import argparse
import io
import tarfile
import tempfile
import time
from pathlib import Path

import docker

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.summary import score_task
from taskfoundry.kinds.feature import attacks
from taskfoundry.kinds.feature.grade import grade_feature, start_state_files, start_state_submission
from taskfoundry.kinds.feature.selfcheck import empty_submission
from taskfoundry.kinds.feature.taskfile import FeatureTaskYaml
from taskfoundry.models import TestsJson, load_json_model, load_yaml_model

TIMES: list[float] = []


def _tar(files: dict[str, bytes], dest: Path) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    dest.write_bytes(buf.getvalue())
    return dest


def grade(task_dir: Path, submission: Path, isolate: bool, client: docker.DockerClient) -> str:
    """`f2p passed/f2p` and ` R` when resolved, ` (error code)` when the grader refused it."""
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    config = EvalConfig(isolate=isolate)
    start = time.monotonic()
    result = grade_feature(task_dir, submission, config, client)
    TIMES.append(time.monotonic() - start)
    tests = load_json_model(task_dir / "tests.json", TestsJson)
    score = score_task(task_dir.name, tests.expected(), result, config.near_resolved)
    f2p = sum(1 for t in result.test_results if t.name in task.f2p and t.status == "passed")
    return f"{f2p}/{len(task.f2p)}{' R' if score.resolved else ''}"


def row(
    task_dir: Path, names: list[str], undefended: bool, client: docker.DockerClient, tmp: Path
) -> list[str]:
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    start = start_state_files(task.images.task_cleanroom, client)
    cells = [
        task_dir.name,
        grade(task_dir, task_dir / "solution.tar.gz", True, client),
        grade(task_dir, start_state_submission(task_dir, client, tmp / "start.tar.gz"), True, client),
        grade(task_dir, empty_submission(tmp / "empty.tar.gz"), True, client),
    ]
    for name in names:
        submission = _tar(attacks.make(name, start).files, tmp / f"{name}.tar.gz")
        cell = grade(task_dir, submission, True, client)
        if undefended:
            cell += f" (off: {grade(task_dir, submission, False, client)})"
        cells.append(cell)
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tasks", nargs="+", type=Path, help="folders of task directories")
    parser.add_argument(
        "--undefended", action="store_true", help="also grade each attack with isolate: false"
    )
    parser.add_argument("--attacks", default=",".join(attacks.ATTACKS))
    args = parser.parse_args()
    names = [n for n in args.attacks.split(",") if n]
    missing = [str(folder) for folder in args.tasks if not folder.is_dir()]
    if missing:
        parser.error(f"not a folder of task directories: {', '.join(missing)}")
    client = docker.from_env()
    dirs = sorted(d for folder in args.tasks for d in folder.iterdir() if d.name.endswith(".l1"))
    print("| task | reference | start state | empty | " + " | ".join(names) + " |")
    print("|---" * (4 + len(names)) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for task_dir in dirs:
            print(
                "| " + " | ".join(row(task_dir, names, args.undefended, client, Path(tmp))) + " |", flush=True
            )
    print(f"\n{len(TIMES)} gradings, mean {sum(TIMES) / max(len(TIMES), 1):.1f} s each")


if __name__ == "__main__":
    main()
