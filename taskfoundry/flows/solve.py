"""The run flow: solve then grade each selected task (a task run per task, `concurrency` at a
time), resume what an earlier run finished, then the JSONL report and the dashboard summary.

The per-task work is `taskfoundry.solve.batch`; this module only schedules and publishes.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from taskfoundry.flows import names
from taskfoundry.flows.artifacts import artifact_key
from taskfoundry.sandbox.docker import docker_client
from taskfoundry.solve.batch import finished_row, solve_and_grade, summary_markdown, write_report
from taskfoundry.solve.config import SolveConfig
from taskfoundry.solve.records import RunRow
from taskfoundry.solve.solve import make_driver

log = logging.getLogger(__name__)
_report_lock = threading.Lock()


@task(name="solve-task", task_run_name="solve {task_dir.name}", cache_policy=NO_CACHE)
def solve_task_run(task_dir: Path, run_dir: Path, config: SolveConfig) -> RunRow:
    driver = make_driver(config, os.environ)  # the API key: read here, at the edge
    client = docker_client()
    try:
        return solve_and_grade(task_dir, run_dir, config, driver, client)
    finally:
        client.close()


def report_rows(rows: list[RunRow]) -> list[dict[str, object]]:
    return [
        {
            "task": r.task,
            "kind": r.kind,
            "resolved": r.resolved,
            "pass_rate": f"{r.pass_rate:.1%}",
            "steps": r.steps,
            "tokens": r.input_tokens + r.output_tokens,
            "cost_usd": round(r.cost_usd, 4),
            "seconds": round(r.seconds, 1),
            "end_reason": r.end_reason,
        }
        for r in rows
    ]


@flow(name="agent-run", flow_run_name=names.agent_run_name, log_prints=False)
def run_flow(task_dirs: list[Path], run_dir: Path, config: SolveConfig) -> list[RunRow]:
    """Every task of `task_dirs` solved and graded into `run_dir`; rows in task order. A task
    whose result.json an earlier run left is not run again."""
    run_dir.mkdir(parents=True, exist_ok=True)
    rows: dict[str, RunRow] = {}
    failed: list[str] = []
    todo = []
    for task_dir in task_dirs:
        done = finished_row(run_dir, task_dir.name)
        if done is None:
            todo.append(task_dir)
        else:
            rows[task_dir.name] = done
    log.info("%d tasks to run, %d finished earlier", len(todo), len(rows))
    pool: TaskRunner[Any] = ThreadPoolTaskRunner(max_workers=config.concurrency)
    with pool as runner:
        futures: list[PrefectFuture[Any]] = [
            runner.submit(solve_task_run, {"task_dir": d, "run_dir": run_dir, "config": config}) for d in todo
        ]
        for task_dir, future in zip(todo, futures, strict=True):
            try:
                row = future.result()
            except Exception as exc:  # noqa: BLE001 - the per-task boundary: left unfinished, run again
                log.warning("%s: not run: %s", task_dir.name, exc)
                failed.append(f"{task_dir.name}: {exc}")
                continue
            with _report_lock:  # a killed run still leaves the rows it finished
                rows[row.task] = row
                write_report(run_dir, list(rows.values()))
    ordered = [rows[d.name] for d in task_dirs if d.name in rows]
    write_report(run_dir, ordered)
    key = artifact_key("agent-run", run_dir.name)
    create_table_artifact(
        report_rows(ordered) or [{"task": "", "end_reason": "no tasks"}],
        key=key,
        description=f"agent run {run_dir}: one row per task",
    )
    notes = "".join(f"\n- not run: {line}" for line in failed)
    create_markdown_artifact(summary_markdown(run_dir, ordered) + notes, key=key + "-report")
    return ordered
