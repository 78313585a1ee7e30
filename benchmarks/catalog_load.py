"""Catalog speed: load N task directories, filter, dump, load the dump, cut a release (no images).

    python benchmarks/catalog_load.py                # 1,000 tasks
    python benchmarks/catalog_load.py --tasks 5000

Task directories are written with the project's models into a temporary folder (removed
afterwards): task.yaml, tests.json with 200 test names, one small branch tarball.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from taskfoundry import atomic
from taskfoundry.catalog import Catalog
from taskfoundry.catalog.release import make_release
from taskfoundry.models import (
    Branch,
    Images,
    TaskStats,
    TaskYaml,
    TestsJson,
    branch_key,
    save_json,
    save_yaml,
)

LANGUAGES = ("c", "rust", "go", "python", "cpp")
LEVELS = ("easy", "medium", "hard")


def write_tasks(tasks: Path, n: int, rng: random.Random) -> None:
    key = branch_key("explorer-seed0")
    for i in range(n):
        task_id = f"owner{i % 97}__repo{i}.{i:07x}"
        base = f"taskfoundry/{task_id.replace('__', '_1776_')}"
        task = TaskYaml(
            repository=f"owner{i % 97}/repo{i}",
            commit=f"{i:07x}" + "0" * 33,
            language=rng.choice(LANGUAGES),
            difficulty=rng.choice(LEVELS),  # type: ignore[arg-type]
            eval_clean_hashes=[],
            task_id=task_id,
            difficulty_score=rng.uniform(0, 6),
            source=f"/src/repo{i}",
            created_at=datetime(2024, 1 + i % 12, 1 + i % 28, tzinfo=UTC),
            executable=f"repo{i}",
            images=Images(task=f"{base}:task", task_cleanroom=f"{base}:task_cleanroom"),
            stats=TaskStats(tests_kept=200, line_rate=rng.random()),
        )
        save_yaml(tasks / task_id / "task.yaml", task)
        names = [f"eval.tests.test_m{j // 20}.test_{j}" for j in range(200)]
        save_json(tasks / task_id / "tests.json", TestsJson(branches={key: Branch(tests=names)}))
        atomic.write_bytes(tasks / task_id / "tests" / f"{key}.tar.gz", rng.randbytes(20_000))


def timed(what: str, fn: Callable[[], Any], n: int) -> Any:
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    print(f"{what:<34} {seconds:7.2f} s  {n / seconds:9.0f} tasks/s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    args = parser.parse_args()
    n = args.tasks
    with tempfile.TemporaryDirectory(prefix="tf-catalog-bench-") as tmp:
        out = Path(tmp) / "out"
        write_tasks(out / "tasks", n, random.Random(0))
        cat = timed(f"Catalog.load of {n} task dirs", lambda: Catalog.load(out), n)
        assert len(cat) == n and not cat.errors
        timed("filter + breakdown", lambda: cat.filter(language=["c", "go"]).breakdown("difficulty"), n)
        dump = timed("dump (JSON lines)", lambda: cat.dump(Path(tmp) / "cat.jsonl"), n)
        again = timed("load of the dump", lambda: Catalog.load(dump), n)
        assert again.tasks() == cat.tasks()
        cut = datetime(2100, 1, 1)
        timed(
            "release --no-images (copy + sha256)",
            lambda: make_release(out, Path(tmp) / "rel", "bench", cut, images=False),
            n,
        )


if __name__ == "__main__":
    main()
