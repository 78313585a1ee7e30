"""`taskfoundry discover`: candidate sources released since a date, as a table and a catalog."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from taskfoundry.cli import CONFIG_OPTION, make_config
from taskfoundry.discover.run import discover, table, write_catalog
from taskfoundry.discover.settings import REGISTRIES
from taskfoundry.errors import TaskfoundryError


@click.command("discover")
@click.option(
    "--since",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="released on or after this day (UTC) [discover.window_days back]",
)
@click.option("--registry", default=None, help=f"comma-separated, of {','.join(REGISTRIES)} [all]")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="candidates per registry [25]")
@click.option(
    "--max-requests", type=click.IntRange(min=0), default=None, help="HTTP requests per registry [150]"
)
@click.option("--kind", default=None, help="the task kind the catalog is for [program]")
@click.option(
    "--out",
    "catalog",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="write the candidates as a catalog that `refresh --catalog` reads",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@CONFIG_OPTION
def discover_command(
    since: datetime | None,
    registry: str | None,
    limit: int | None,
    max_requests: int | None,
    kind: str | None,
    catalog: Path | None,
    fmt: str,
    config_file: Path | None,
) -> None:
    """List the registries' sources released since a date, with a verdict per task kind."""
    try:
        registries = [r.strip() for r in registry.split(",")] if registry else None
        flags = {"registries": registries, "limit": limit, "max_requests": max_requests}
        config = make_config(config_file, kind=kind, discover=flags)
        day = (
            since.date()
            if since
            else (datetime.now(UTC) - timedelta(days=config.discover.window_days)).date()
        )
        found = discover(
            day, config.discover, config.sources, config.sources.cache(config.work_dir), config.kind
        )
        written = write_catalog(found, catalog) if catalog else None
    except TaskfoundryError as exc:
        click.echo(f"taskfoundry: {exc}", err=True)
        sys.exit(1)
    click.echo(found.model_dump_json(indent=2) if fmt == "json" else table(found))
    if catalog is not None:
        click.echo(f"catalog: {written} candidates written to {catalog}", err=fmt == "json")
