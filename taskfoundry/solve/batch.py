"""`run`'s pieces that need no Prefect: which tasks, one task solved then graded (resumable),
and the JSONL report. `flows/solve.py` schedules them."""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from pathlib import Path

import docker
from pydantic import ValidationError

from taskfoundry import atomic
from taskfoundry.errors import ConfigError
from taskfoundry.evaluate.run import evaluate_one, find_tasks
from taskfoundry.models import TaskYaml, load_json_model, load_yaml_model, save_json
from taskfoundry.solve.config import SolveConfig
from taskfoundry.solve.drivers import Driver
from taskfoundry.solve.records import (
    REPORT,
    RESULT_JSON,
    SOLVE_JSON,
    SUBMISSION,
    RunRow,
    SolveRecord,
    task_run_dir,
)
from taskfoundry.solve.solve import solve_task

log = logging.getLogger(__name__)


def select_tasks(
    tasks_dir: Path, kind: str | None = None, language: str | None = None, limit: int | None = None
) -> list[Path]:
    """Task directories of `tasks_dir` of that kind and language, in name order, at most `limit`."""
    chosen = []
    for task_dir in find_tasks(tasks_dir):
        task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
        if kind in (None, task.kind) and language in (None, task.language):
            chosen.append(task_dir)
    return chosen[:limit] if limit is not None else chosen


def finished_row(run_dir: Path, task_id: str) -> RunRow | None:
    """The task's row if an earlier run finished it (graded, no infrastructure failure)."""
    path = task_run_dir(run_dir, task_id) / RESULT_JSON
    try:
        row = RunRow.model_validate_json(path.read_text())
    except (OSError, ValidationError):
        return None
    return None if row.infra_error else row


def _earlier_solve(run_dir: Path, task_id: str) -> SolveRecord | None:
    """A solve a killed run finished before its grade: graded again, not solved again."""
    out = task_run_dir(run_dir, task_id)
    if not (out / SUBMISSION).is_file():
        return None
    try:
        record = load_json_model(out / SOLVE_JSON, SolveRecord)
    except ConfigError:
        return None
    return None if record.end_reason == "sandbox_error" else record


def solve_and_grade(
    task_dir: Path, run_dir: Path, config: SolveConfig, driver: Driver, client: docker.DockerClient
) -> RunRow:
    """Solve (unless a finished solve is there), grade as `taskfoundry eval` does, and write
    result.json last: its presence is what marks the task finished."""
    started = time.monotonic()
    task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    record = _earlier_solve(run_dir, task.task_id) or solve_task(task_dir, run_dir, config, driver, client)
    score = evaluate_one(task_dir, run_dir, config.eval, client, run_dir.resolve().name)
    row = RunRow(
        task=task.task_id,
        kind=task.kind,
        language=task.language,
        difficulty=task.difficulty,
        driver=record.driver,
        resolved=score.resolved,
        pass_rate=round(score.pass_rate, 6),
        tests=score.tests,
        passed=score.passed,
        eval_error=score.error_code,
        infra_error=score.infra_error,
        steps=record.steps,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        cost_usd=round(record.cost_usd, 6),
        seconds=round(record.seconds + time.monotonic() - started, 3),
        end_reason=record.end_reason,
    )
    save_json(task_run_dir(run_dir, task.task_id) / RESULT_JSON, row)
    return row


def write_report(run_dir: Path, rows: list[RunRow]) -> Path:
    """report.jsonl: one JSON object a line, in task order."""
    lines = [json.dumps(r.model_dump(mode="json")) for r in sorted(rows, key=lambda r: r.task)]
    path = run_dir / REPORT
    atomic.write_text(path, "".join(line + "\n" for line in lines))
    return path


def read_report(path: Path) -> list[RunRow]:
    return [RunRow.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]


def rates_by(rows: list[RunRow], field: str) -> dict[str, tuple[int, int]]:
    """(resolved, tasks) per value of `field` (kind, language, difficulty, end_reason)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        entry = counts[str(getattr(row, field))]
        entry[0] += int(row.resolved)
        entry[1] += 1
    return {key: (a, b) for key, (a, b) in sorted(counts.items())}


def summary_markdown(run_dir: Path, rows: list[RunRow]) -> str:
    """The run in prose and tables: totals, then solve rate by kind, language and difficulty."""
    resolved = sum(r.resolved for r in rows)
    cost = sum(r.cost_usd for r in rows)
    lines = [
        f"# agent run `{run_dir.name}`",
        "",
        f"{resolved} of {len(rows)} tasks resolved; cost ${cost:.4f};"
        f" {sum(r.steps for r in rows)} steps; {sum(r.input_tokens + r.output_tokens for r in rows)} tokens",
    ]
    for field in ("kind", "language", "difficulty", "end_reason"):
        lines += ["", f"| {field} | resolved | tasks | rate |", "|---|---|---|---|"]
        for key, (a, b) in rates_by(rows, field).items():
            lines.append(f"| {key} | {a} | {b} | {a / b:.0%} |")
    return "\n".join(lines) + "\n"
