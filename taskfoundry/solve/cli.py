"""`taskfoundry solve` and `taskfoundry run` (registered lazily by taskfoundry.cli)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import click

from taskfoundry.errors import ConfigError, TaskfoundryError


def _options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options `solve` and `run` share: the driver, its budgets, the selection."""
    options = [
        click.option("--run", "run_dir", required=True, type=click.Path(file_okay=False, path_type=Path)),
        click.option("--model", default=None, help="the project's agent loop on PROVIDER:NAME"),
        click.option("--base-url", default=None, help="the model API's base URL [the SDK's]"),
        click.option("--api-key-env", default=None, help="variable holding the API key [provider's usual]"),
        click.option("--price", default=None, help="IN,OUT: USD per million tokens (cost budget) [0,0]"),
        click.option(
            "--agent-command", default=None, help="an external agent: a command run in the workspace"
        ),
        click.option(
            "--agent-dir",
            type=click.Path(exists=True, file_okay=False),
            default=None,
            help="host folder copied read-only to /agent for the command",
        ),
        click.option("--step-limit", type=click.IntRange(min=1), default=None, help="model calls [50]"),
        click.option("--cost-limit", type=float, default=None, help="USD per task [5]"),
        click.option("--time-limit", type=float, default=None, help="seconds per task [3600]"),
        click.option("--kind", default=None, help="only tasks of this kind"),
        click.option("--language", default=None, help="only tasks in this language"),
        click.option("--limit", type=click.IntRange(min=1), default=None, help="at most this many tasks"),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def make_solve_config(
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    price: str | None,
    agent_command: str | None,
    agent_dir: str | None,
    step_limit: int | None,
    cost_limit: float | None,
    time_limit: float | None,
    **extra: Any,
) -> Any:
    from taskfoundry.models import error_text
    from taskfoundry.solve.config import SolveConfig, model_config_of

    fields: dict[str, Any] = {
        "model": model_config_of(model, base_url, api_key_env, price) if model else None,
        "agent_command": agent_command,
        "agent_dir": str(Path(agent_dir).resolve()) if agent_dir else None,
        "step_limit": step_limit,
        "cost_limit": cost_limit,
        "time_limit": time_limit,
        **extra,
    }
    given = {"model", "agent_command"}
    try:
        return SolveConfig.model_validate({k: v for k, v in fields.items() if v is not None or k in given})
    except ValueError as exc:
        raise ConfigError(error_text(exc)) from exc


def _tasks(task_or_out: Path, kind: str | None, language: str | None, limit: int | None) -> list[Path]:
    """A task directory as is; an OUT (or its tasks/ folder): its tasks, selected."""
    from taskfoundry.solve.batch import select_tasks

    if (task_or_out / "task.yaml").is_file():
        return [task_or_out]
    tasks = task_or_out / "tasks" if (task_or_out / "tasks").is_dir() else task_or_out
    found = select_tasks(tasks, kind, language, limit)
    if not found:
        raise ConfigError(f"no tasks selected under {tasks}")
    return found


def _fail(exc: TaskfoundryError) -> None:
    click.echo(f"taskfoundry: {exc}", err=True)
    sys.exit(1)


@click.command("solve")
@click.argument("task_or_out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@_options
def solve_command(
    task_or_out: Path,
    run_dir: Path,
    kind: str | None,
    language: str | None,
    limit: int | None,
    **driver: Any,
) -> None:
    """Let an agent work on TASK_OR_OUT (a task directory, or each task of an OUT) in its
    worker's container; write RUN_DIR/<task id>/submission.tar.gz, trajectory.json, solve.json."""
    from taskfoundry.sandbox.docker import docker_client
    from taskfoundry.solve.solve import make_driver, solve_task

    try:
        config = make_solve_config(**driver)
        task_dirs = _tasks(task_or_out, kind, language, limit)
        client = docker_client()
        for task_dir in task_dirs:
            record = solve_task(task_dir, run_dir, config, make_driver(config, os.environ), client)
            click.echo(
                f"{record.task_id}\t{record.end_reason}\t{record.steps} steps\t${record.cost_usd:.4f}"
                f"\t{record.seconds:.0f}s\t{run_dir / record.task_id}"
            )
    except TaskfoundryError as exc:
        _fail(exc)


RunFlow = Callable[[list[Path], Path, Any], list[Any]]  # (task dirs, run dir, SolveConfig) -> RunRows
Server = Callable[[], AbstractContextManager[Callable[[], None]]]  # cli_server.embedded_server


def run_command(run_flow: RunFlow, server: Server) -> click.Command:
    """The `run` command; `run_flow` schedules the tasks and `server` starts the Prefect server
    they report to (the CLI hands in `flows.solve` and its embedded server: this package never
    imports the layers above it)."""

    @click.command("run")
    @click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
    @_options
    @click.option("--concurrency", type=click.IntRange(min=1), default=None, help="tasks at once [1]")
    def command(
        out: Path,
        run_dir: Path,
        kind: str | None,
        language: str | None,
        limit: int | None,
        concurrency: int | None,
        **driver: Any,
    ) -> None:
        """Solve then grade each selected task of OUT as a Prefect flow; RUN_DIR/report.jsonl, a
        row per task. Tasks an earlier run of RUN_DIR finished are not run again."""
        from taskfoundry.solve.batch import summary_markdown

        with server() as server_ready:
            try:
                config = make_solve_config(concurrency=concurrency, **driver)
                task_dirs = _tasks(out, kind, language, limit)
                server_ready()
                rows = run_flow(task_dirs, run_dir.resolve(), config)
            except TaskfoundryError as exc:
                _fail(exc)
        click.echo(summary_markdown(run_dir, rows), nl=False)
        click.echo(f"report: {run_dir / 'report.jsonl'}")
        sys.exit(0 if len(rows) == len(task_dirs) else 1)

    return command
