"""`taskfoundry discover`: candidate sources released since a date, as a table and a catalog.

`taskfoundry.cli` makes the command with its config loader (`discover_with_config`), so this
package imports nothing of the command line above it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from taskfoundry.discover.run import discover, table, write_catalog
from taskfoundry.discover.settings import REGISTRIES
from taskfoundry.errors import TaskfoundryError

# taskfoundry.cli.make_config: defaults, then the file, then flags; it gives a taskfoundry.config
# Config, not named here: this package stands below the config that holds its settings
MakeConfig = Callable[..., Any]


def discover_command(make_config: MakeConfig) -> click.Command:
    """The `discover` command, its config loaded by `make_config`."""

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
    @click.option(
        "--config",
        "config_file",
        type=click.Path(exists=True, path_type=Path),
        help="YAML config (fields of taskfoundry.config.Config)",
    )
    def command(
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
        registries = [r.strip() for r in registry.split(",")] if registry else None
        flags = {"registries": registries, "limit": limit, "max_requests": max_requests}
        try:
            config = make_config(config_file, kind=kind, discover=flags)
        except TaskfoundryError as exc:
            click.echo(f"taskfoundry: {exc}", err=True)
            sys.exit(1)
        run(config, since, catalog, fmt)

    return command


def run(config: Any, since: datetime | None, catalog: Path | None, fmt: str) -> None:
    """Discover, print the table (or JSON), write the catalog when asked."""
    back = timedelta(days=config.discover.window_days)
    day = since.date() if since else (datetime.now(UTC) - back).date()
    try:
        cache = config.sources.cache(discovery_home(config))
        found = discover(day, config.discover, config.sources, cache, config.kind)
        written = write_catalog(found, catalog) if catalog else None
    except TaskfoundryError as exc:
        click.echo(f"taskfoundry: {exc}", err=True)
        sys.exit(1)
    click.echo(found.model_dump_json(indent=2) if fmt == "json" else table(found))
    if catalog is not None:
        click.echo(f"catalog: {written} candidates written to {catalog}", err=fmt == "json")


USER_CACHE = Path.home() / ".cache" / "taskfoundry" / "discover"


def discovery_home(config: Any) -> Path:
    """Where discovery keeps its registry answers: the OUT folder's work dir when a config names
    one, else the user's cache; never a ./out nobody asked for."""
    default = Path(type(config).model_fields["out"].default).resolve()
    return USER_CACHE if Path(config.out) == default else Path(config.work_dir)
