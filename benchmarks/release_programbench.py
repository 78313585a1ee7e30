"""A release graded by ProgramBench's own evaluator, beside taskfoundry's: the layout check.

    python benchmarks/release_programbench.py OUT --programbench-venv VENV [--namespace NS]

OUT holds built tasks (e.g. `taskfoundry build examples/csvq --out OUT`); VENV is a virtual
environment with `pip install programbench` (not a dependency of this project). The script
makes a release of OUT with its images tagged under NS, moves it to another folder, removes
the tagged images (as on another machine) and `release load`s it there (hashes checked,
images loaded), copies each task's task.yaml and tests.json into ProgramBench's
`data/tasks/` (the only place its evaluator reads task definitions from) and runs
`programbench eval` with PROGRAMBENCH_BLOB_DIR=<release>/tasks, PROGRAMBENCH_DOCKER_ORG=NS
and its default image tag, on two submissions per task: the task's solution.tar.gz and a
do-nothing program. It prints passed / total per task and submission for both
evaluators. NS's tags and the copied task definitions are removed at the end.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from taskfoundry.catalog import Catalog
from taskfoundry.catalog.grading import engine
from taskfoundry.catalog.release import load_release, make_release

# ProgramBench's own code reads its eval.json: resolved tests and tests, ignored ones left out
READ_EVAL = """
import json, sys
from programbench.eval.eval import EvaluationResult
from programbench.utils.load_data import get_ignored_tests
r = EvaluationResult.model_validate_json(open(sys.argv[1]).read())
r = r.without_ignored(get_ignored_tests(json.load(open(sys.argv[2]))))
print(r.n_resolved, len(r), r.error_code or "")
"""


def do_nothing(dest: Path) -> Path:
    """A submission whose program exits 0 and prints nothing, whatever it is asked."""
    script = b"#!/bin/sh\nprintf '#!/bin/sh\\nexit 0\\n' > executable\nchmod +x executable\n"
    with tarfile.open(dest, "w:gz") as tar:
        info = tarfile.TarInfo("compile.sh")
        info.size, info.mode = len(script), 0o755
        tar.addfile(info, io.BytesIO(script))
    return dest


def programbench_tasks_dir(venv: Path) -> Path:
    code = "from programbench.constants import TASKS_DIR; print(TASKS_DIR)"
    out = subprocess.run([str(venv / "bin/python"), "-c", code], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def programbench_eval(venv: Path, run: Path, release: Path, namespace: str) -> dict[str, str]:
    """`programbench eval RUN` with its default flags; per task: 'passed/total error'."""
    env = {"PROGRAMBENCH_BLOB_DIR": str(release / "tasks"), "PROGRAMBENCH_DOCKER_ORG": namespace}
    cmd = [str(venv / "bin/programbench"), "eval", str(run), "--docker-cpus", "2"]
    subprocess.run(cmd, env={**os.environ, **env}, check=True, timeout=3600)
    scores = {}
    for eval_json in sorted(run.glob("*/*.eval.json")):
        tests = release / "tasks" / eval_json.parent.name / "tests.json"
        read = [str(venv / "bin/python"), "-c", READ_EVAL, str(eval_json), str(tests)]
        out = subprocess.run(read, capture_output=True, text=True, check=True).stdout.split()
        scores[eval_json.parent.name] = f"{out[0]}/{out[1]} {' '.join(out[2:])}".strip()
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--programbench-venv", type=Path, required=True)
    parser.add_argument("--namespace", default="tfpbcheck")
    args = parser.parse_args()
    pb_tasks = programbench_tasks_dir(args.programbench_venv)
    client = engine()
    copied: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="tf-release-pb-") as tmp:
        root = Path(tmp)
        try:
            start = time.monotonic()
            info = make_release(
                args.out, root / "made", "pbcheck", datetime.now(UTC), namespace=args.namespace, client=client
            )
            made = time.monotonic() - start
            there = root / "elsewhere" / "pbcheck"
            shutil.move(root / "made", there)
            for image in info.images:  # as on another machine: the release's images are not here
                client.images.remove(image)
            start = time.monotonic()
            load_release(there)
            loaded = time.monotonic() - start
            cat = Catalog.load(there)
            size = (there / "images/images.tar").stat().st_size
            print(f"release: {len(cat)} tasks, {len(info.images)} images, archive {size / 1e9:.2f} GB")
            print(f"  made in {made:.0f} s, checked and loaded in {loaded:.0f} s")
            for record in cat:
                dest = pb_tasks / record.task_id
                dest.mkdir(parents=True, exist_ok=True)
                copied.append(dest)
                for name in ("task.yaml", "tests.json"):
                    shutil.copy2(there / "tasks" / record.task_id / name, dest / name)
            for label in ("reference", "do-nothing"):
                run = root / "runs" / label
                for record in cat:
                    sub = run / record.task_id / "submission.tar.gz"
                    sub.parent.mkdir(parents=True)
                    if label == "reference":
                        assert record.solution is not None, f"{record.task_id} has no solution.tar.gz"
                        shutil.copy2(record.solution, sub)
                    else:
                        do_nothing(sub)
                ours = {r.task_id: cat.evaluate(r, run / r.task_id / "submission.tar.gz") for r in cat}
                theirs = programbench_eval(args.programbench_venv, run, there, args.namespace)
                for task_id, grade in ours.items():
                    mine = f"{grade.passed}/{grade.total} {grade.error_code or ''}".strip()
                    print(
                        f"{label:>10} {task_id}: taskfoundry {mine}; "
                        f"ProgramBench {theirs.get(task_id, 'no eval.json')}"
                    )
            print(json.dumps({"release": info.name, "images": info.images}))
        finally:
            for dest in copied:
                shutil.rmtree(dest, ignore_errors=True)
            for image in client.images.list(name=f"{args.namespace}/*"):
                for tag in image.tags:
                    if tag.startswith(f"{args.namespace}/"):
                        client.images.remove(tag)
            client.close()


if __name__ == "__main__":
    main()
