"""`taskfoundry eval RUN_DIR [--tasks DIR] [--workers N]` (registered by taskfoundry.cli)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import yaml
from pydantic import ValidationError

from taskfoundry.errors import ConfigError, TaskfoundryError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.store import TASKS, is_url, open_out


def load_eval_config(path: Path | None, overrides: dict[str, object]) -> EvalConfig:
    """Defaults, then the `eval:` section of the YAML at `path`, then CLI flags."""
    data: dict[str, object] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
        section = loaded.get("eval", {}) if isinstance(loaded, dict) else None
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: `eval` must be a mapping")
        data.update(section)
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return EvalConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"bad eval option: {exc}") from exc


@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--tasks",
    "tasks_dir",
    default="out/tasks",
    show_default=True,
    help="where the task directories are: a folder, or an OUT in object storage (s3://bucket/prefix)",
)
@click.option(
    "--workers", type=click.IntRange(min=1), default=None, help="tasks evaluated at the same time [1]"
)
@click.option("--compile-timeout", type=float, default=None, help="seconds compile.sh may run [900]")
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, path_type=Path),
    help="YAML config; its `eval:` section holds EvalConfig fields",
)
def _eval(
    run_dir: Path,
    tasks_dir: str,
    workers: int | None,
    compile_timeout: float | None,
    config_file: Path | None,
) -> None:
    """Grade RUN_DIR/<task id>/submission.tar.gz against every task in --tasks; write
    RUN_DIR/<task id>/<task id>.eval.json and RUN_DIR/summary.json."""
    from taskfoundry.evaluate.run import evaluate_run
    from taskfoundry.grading.summary import summary_text

    try:
        config = load_eval_config(config_file, {"workers": workers, "compile_timeout": compile_timeout})
        tasks = open_out(tasks_dir) / TASKS if is_url(tasks_dir) else Path(tasks_dir)
        summary = evaluate_run(run_dir, tasks, config)
    except TaskfoundryError as exc:
        click.echo(f"taskfoundry: {exc}", err=True)
        sys.exit(1)
    click.echo(summary_text(summary))
    click.echo(f"summary: {run_dir / 'summary.json'}")
    if summary.warnings:  # submissions for tasks --tasks does not hold: a wrong directory?
        click.echo(f"taskfoundry: {'; '.join(summary.warnings)}", err=True)
        sys.exit(1)


eval_command = click.command("eval")(_eval)
