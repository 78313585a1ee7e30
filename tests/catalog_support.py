"""Tiny builders for catalog tests: task directories written with the project's own models."""

from __future__ import annotations

import io
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

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


def suite_tarball(path: Path) -> None:
    """A minimal branch tarball: eval/run.sh and one test module."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in {
            "eval/run.sh": "#!/bin/sh\n",
            "eval/tests/test_a.py": "def test_a(): pass\n",
        }.items():
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text.encode()))


def write_task(
    tasks: Path,
    task_id: str,
    *,
    language: str = "c",
    difficulty: str = "easy",
    created: datetime = datetime(2025, 1, 1, tzinfo=UTC),
    tests: int = 3,
    line_rate: float = 0.5,
    extra: dict[str, Any] | None = None,
    namespace: str = "taskfoundry",
    commit: str | None = None,
) -> Path:
    """A task directory: task.yaml (+ `extra` top-level keys, e.g. kind), tests.json, one tarball."""
    owner, rest = task_id.split("__")
    base = f"{namespace}/{owner}_1776_{rest}"
    task = TaskYaml(
        repository=f"{owner}/{rest.split('.')[0]}",
        commit=commit or rest.split(".")[1] + "0" * 33,
        language=language,
        difficulty=difficulty,  # type: ignore[arg-type]
        eval_clean_hashes=[],
        task_id=task_id,
        difficulty_score={"easy": 1.0, "medium": 3.0, "hard": 5.0}[difficulty],
        source=f"/src/{rest}",
        created_at=created,
        executable=rest.split(".")[0],
        images=Images(task=f"{base}:task", task_cleanroom=f"{base}:task_cleanroom"),
        stats=TaskStats(tests_kept=tests, line_rate=line_rate),
    )
    task_dir = tasks / task_id
    save_yaml(task_dir / "task.yaml", task)
    if extra:
        data = yaml.safe_load((task_dir / "task.yaml").read_text())
        for key, value in extra.items():
            if isinstance(value, dict):
                data[key] = {**(data.get(key) or {}), **value}
            else:
                data[key] = value
        (task_dir / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    key = branch_key("explorer-seed0")
    names = [f"eval.tests.test_a.test_{i}" for i in range(tests)]
    save_json(task_dir / "tests.json", TestsJson(branches={key: Branch(tests=names)}))
    suite_tarball(task_dir / "tests" / f"{key}.tar.gz")
    return task_dir


def sample_out(out: Path) -> Path:
    """An OUT folder of five tasks: three kinds, three languages, three difficulties."""
    tasks = out / "tasks"
    write_task(
        tasks,
        "acme__alpha.aaaaaaa",
        created=datetime(2024, 3, 1, tzinfo=UTC),
        extra={"gold_integrity": "sealed"},
    )
    write_task(tasks, "acme__beta.bbbbbbb", language="rust", difficulty="medium", tests=5)
    write_task(
        tasks,
        "acme__gamma.ccccccc",
        language="go",
        difficulty="hard",
        extra={"kind": "function", "stats": {"mutation_score": 0.75}},
        created=datetime(2025, 6, 1, tzinfo=UTC),
    )
    write_task(tasks, "zeta__delta.ddddddd", extra={"kind": "feature"}, created=datetime(2025, 9, 1))
    write_task(
        tasks,
        "zeta__eps.eeeeeee",
        language="rust",
        extra={"kind": "program", "gold_integrity": "instrumentable"},
        line_rate=0.9,
    )
    return out
