"""`taskfoundry lint PATH...`: lint pytest suites; exit 0 clean, 1 on HIGH, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import click

from taskfoundry.errors import ConfigError
from taskfoundry.linters.config import LintConfig, load_config
from taskfoundry.linters.engine import lint_paths
from taskfoundry.linters.report import render_text

EXIT_CLEAN = 0
EXIT_HIGH = 1
EXIT_BAD_INPUT = 2


@click.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: readable, grouped by test; json: one object with findings and assertions.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="YAML file of LintConfig (rules on/off, thresholds, allowances).",
)
@click.option(
    "--suite",
    type=click.Choice(["auto", "output", "unit"]),
    default=None,
    help="what the tests are: output (run a program), unit (call code), auto: each by whether it "
    "runs a program [the config's suite, auto]",
)
def lint(paths: tuple[Path, ...], output_format: str, config_path: Path | None, suite: str | None) -> None:
    """Lint pytest test files or directories against the assertion rules, with triage.

    Exit status: 0 when no HIGH finding, 1 when there is one, 2 when a file could not be
    read or parsed (the other files are still linted) or the config is invalid.
    """
    try:
        config = load_config(config_path) if config_path is not None else LintConfig()
        if suite is not None:
            config = config.model_copy(update={"suite": suite})
        result = lint_paths(list(paths), config)
    except ConfigError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(EXIT_BAD_INPUT) from exc
    if output_format == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        click.echo(render_text(result))
    for error in result.errors:
        click.echo(f"error: {error.path}: {error.message}", err=True)
    if result.errors:
        raise SystemExit(EXIT_BAD_INPUT)
    raise SystemExit(EXIT_HIGH if result.has_high() else EXIT_CLEAN)
