"""Build every example twice (cold: its images removed first; warm: right after) and print a
table of stage wall times and test counts.

    .venv/bin/python benchmarks/e2e_examples.py [--out DIR] [EXAMPLE ...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import yaml
from docker.errors import APIError
from prefect.testing.utilities import prefect_test_harness

from taskfoundry.config import Config
from taskfoundry.flows.build import build_flow
from taskfoundry.sandbox.docker import docker_client

ROOT = Path(__file__).resolve().parents[1]
STAGES = ["source", "build", "cleanroom", "generate", "lint", "filter"]


def remove_images(name: str) -> None:
    client = docker_client()
    for image in client.images.list():
        if any(f"local_1776_{name}" in tag for tag in image.tags):
            try:
                client.images.remove(image.id, force=True)
            except APIError as exc:  # in use by a running container: that run is not cold
                print(f"note: could not remove {image.tags}: {exc}")


def run_once(example: str, out: Path) -> dict[str, object]:
    start = time.monotonic()
    (task_dir,) = build_flow(str(ROOT / "examples" / example), Config(out=out))
    total = time.monotonic() - start
    task = yaml.safe_load((task_dir / "task.yaml").read_text())
    stats = task["stats"]
    return {"total": total, **stats}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("examples", nargs="*", default=["csvq", "rcalc", "logsum"])
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-e2e"))
    args = parser.parse_args()
    rows = []
    with prefect_test_harness(server_startup_timeout=120):
        for example in args.examples:
            remove_images(example)
            shutil.rmtree(args.out, ignore_errors=True)
            cold = run_once(example, args.out)
            warm = run_once(example, args.out)
            rows.append((example, cold, warm))
    tail = "total | generated | kept | dropped | line cov | dummy pass |"
    head = "| example | run | " + " | ".join(STAGES) + " | " + tail
    print(head)
    print("|" + "---|" * (len(STAGES) + 8))
    for example, cold, warm in rows:
        for label, r in (("cold", cold), ("warm", warm)):
            secs = r["stage_seconds"]
            cells = " | ".join(f"{secs.get(s, 0):.1f}" for s in STAGES)  # type: ignore[union-attr]
            print(
                f"| {example} | {label} | {cells} | {r['total']:.1f} | {r['tests_generated']} | "
                f"{r['tests_kept']} | {json.dumps(r['dropped'])} | {r['line_rate']:.1%} | "
                f"{r['dummy_pass_rate']:.1%} |"
            )


if __name__ == "__main__":
    main()
