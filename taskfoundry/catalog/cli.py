"""`taskfoundry tasks`, `release`, `clean` and `export` (registered by taskfoundry.cli).

`tasks --publish` puts the table on the dashboard through a publisher the CLI hands in
(`flows.dashboard`): the catalog itself never imports the orchestration layer.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table

from taskfoundry.catalog.card import COLUMNS, catalog_rows
from taskfoundry.catalog.catalog import BREAKDOWN_FIELDS, Catalog
from taskfoundry.catalog.export import FORMATS
from taskfoundry.errors import ReleaseError, TaskfoundryError
from taskfoundry.images.build import image_exists
from taskfoundry.store import is_url, open_out

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class FolderOrStore(click.ParamType):
    """An existing local path, or an object store URL (s3://bucket/prefix): its whole published
    tasks copied into this machine's mirror folder, which is what the command reads."""

    name = "PATH|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if isinstance(value, Path) or not is_url(str(value)):
            return click.Path(exists=True, path_type=Path).convert(value, param, ctx)  # type: ignore[no-any-return]
        try:
            return open_out(str(value))
        except (TaskfoundryError, OSError) as exc:
            self.fail(f"{value}: {exc}", param, ctx)


def _fail(exc: TaskfoundryError) -> NoReturn:
    click.echo(f"taskfoundry: {exc}", err=True)
    sys.exit(1)


def _echo_json(data: Any, fmt: str) -> None:
    click.echo(json.dumps(data) if fmt == "jsonl" else json.dumps(data, indent=2))


def _print(cat: Catalog, fmt: str) -> None:
    if fmt == "json":
        _echo_json(cat.as_json(), fmt)
    elif fmt == "jsonl":
        for record in cat.as_json():
            click.echo(json.dumps(record))
    else:
        rows = catalog_rows(cat)
        table = Table(title=f"{len(cat)} tasks")
        for column in COLUMNS:
            table.add_column(column, no_wrap=True)
        for row in rows:
            table.add_row(*(row[c] for c in COLUMNS))
        widths = [max([len(c), *(len(r[c]) for r in rows)]) + 3 for c in COLUMNS]
        console = Console(soft_wrap=False)
        console.width = max(console.width, sum(widths) + 1)  # ids whole, even in a pipe
        console.print(table)


Publisher = Callable[[Path], str]  # publishes the catalog of a path, returns the artifact key


def _list(
    path: Path,
    limit: int | None,
    fmt: str,
    breakdown: str | None,
    filters: dict[str, Any],
    run_dir: Path | None = None,
) -> None:
    # click gives () for a repeatable option not given: no filter, not "match nothing"
    below_gate = filters.pop("below_gate", False)
    cat = Catalog.load(path).filter(**{key: value or None for key, value in filters.items()})
    cat = cat if below_gate else cat.gated()
    if limit is not None:
        cat = cat.limit(limit)
    for error in cat.errors:
        click.echo(f"taskfoundry: left out {error.path}: {error.message.splitlines()[0]}", err=True)
    if run_dir is not None:
        _print_rates(cat, run_dir, breakdown or "kind", fmt)
    elif breakdown is None:
        _print(cat, fmt)
    elif fmt == "table":
        for value, count in cat.breakdown(breakdown).items():
            click.echo(f"{value}\t{count}")
    else:
        _echo_json(cat.breakdown(breakdown), fmt)


def _print_rates(cat: Catalog, run_dir: Path, field: str, fmt: str) -> None:
    rates = cat.solve_rates(run_dir, field)
    if fmt != "table":
        _echo_json(
            {k: {"resolved": r.resolved, "tasks": r.tasks, "rate": r.rate} for k, r in rates.items()}, fmt
        )
        return
    for value, r in rates.items():
        click.echo(f"{value}\t{r.resolved}/{r.tasks}\t{r.rate:.1%}")


def tasks_command(publish: Publisher) -> click.Command:
    """The `tasks` command; `publish` runs for `--publish`."""

    @click.command("tasks")
    @click.argument("path", type=FolderOrStore())
    @click.option("--language", multiple=True, help="keep this language (repeatable)")
    @click.option("--difficulty", multiple=True, help="keep this difficulty: easy, medium, hard (repeatable)")
    @click.option(
        "--kind", multiple=True, help="keep this task kind: program, function, feature (repeatable)"
    )
    @click.option("--id", "ids", multiple=True, help="keep this task id (repeatable)")
    @click.option(
        "--released-before", type=click.DateTime(), default=None, help="released (else built) before"
    )
    @click.option("--released-after", type=click.DateTime(), default=None, help="released on or after")
    @click.option("--limit", type=click.IntRange(min=0), default=None, help="the first N tasks (by id)")
    @click.option(
        "--below-gate", is_flag=True, help="list tasks below their acceptance gate too (else said on stderr)"
    )
    @click.option("--format", "fmt", type=click.Choice(["table", "json", "jsonl"]), default="table")
    @click.option(
        "--breakdown", type=click.Choice(BREAKDOWN_FIELDS), default=None, help="count by this field"
    )
    @click.option(
        "--run",
        "run_dir",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=None,
        help="solve rate of this run's grades (`taskfoundry run` or `eval`), by --breakdown [kind]",
    )
    @click.option(
        "--publish",
        "publish_it",
        is_flag=True,
        help="publish the table of every task of PATH as a Prefect artifact (the dashboard)",
    )
    def command(
        path: Path,
        limit: int | None,
        fmt: str,
        breakdown: str | None,
        publish_it: bool,
        run_dir: Path | None,
        **filters: Any,
    ) -> None:
        """List the built tasks of PATH: an OUT folder (or its object store URL), a tasks folder, a
        release or a .json/.jsonl dump."""
        try:
            _list(path, limit, fmt, breakdown, filters, run_dir)
            if publish_it:
                click.echo(f"published artifact {publish(path)}", err=True)
        except TaskfoundryError as exc:
            _fail(exc)

    return command


class _DefaultMake(click.Group):
    """`release OUT ...` means `release make OUT ...`; `release load DIR` loads."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["make", *args]
        return super().parse_args(ctx, args)


@click.group("release", cls=_DefaultMake)
def release_group() -> None:
    """Make a release of OUT (`release OUT --as-of DATE --name NAME`) or load one (`release load DIR`)."""


@release_group.command("make")
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--as-of", type=click.DateTime(), required=True, help="tasks released (else built) before")
@click.option("--name", required=True, help="the release's name, e.g. v2025.06")
@click.option("--dest", type=click.Path(path_type=Path), default=None, help="[OUT/releases/NAME]")
@click.option("--namespace", default=None, help="tag the images under this namespace (Docker org)")
@click.option("--images/--no-images", default=True, help="docker save the task images [images]")
@click.option("--progress/--no-progress", "show", default=True, help="progress on stderr")
@click.option("--below-gate", is_flag=True, help="release tasks below their acceptance gate too")
def make_command(
    out: Path,
    as_of: datetime,
    name: str,
    dest: Path | None,
    namespace: str | None,
    images: bool,
    show: bool,
    below_gate: bool,
) -> None:
    """Snapshot the tasks of OUT released before --as-of into a folder another machine can load."""
    from taskfoundry.catalog.release import make_release
    from taskfoundry.cli_progress import shown_progress

    if not NAME.match(name):
        _fail(TaskfoundryError(f"release name {name!r}: letters, digits, '.', '_' and '-' only"))
    target = dest or out / "releases" / name
    try:
        with shown_progress(show):
            info = make_release(
                out, target, name, as_of, namespace=namespace, images=images, below_gate=below_gate
            )
    except TaskfoundryError as exc:
        _fail(exc)
    for error in info.left_out:
        click.echo(f"taskfoundry: left out {error.path}: {error.message.splitlines()[0]}", err=True)
    click.echo(f"release {name}: {len(info.tasks)} tasks, {len(info.images)} images in {target}")


@release_group.command("load")
@click.argument("release", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--images/--no-images", default=True, help="docker load the release's images [images]")
def load_command(release: Path, images: bool) -> None:
    """Check every file of RELEASE against its manifest, then load its images."""
    from taskfoundry.catalog.release import load_release

    try:
        info = load_release(release, images=images)
    except TaskfoundryError as exc:
        _fail(exc)
    loaded = f", {len(info.images)} images loaded" if images and info.images else ""
    click.echo(f"release {info.name}: {len(info.tasks)} tasks, every file matches its sha256{loaded}")


@click.command("clean")
@click.argument("target", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="say what would be removed and about how much it frees")
def clean_command(target: Path, dry_run: bool) -> None:
    """Remove the images and caches of a task (TARGET: OUT/tasks/ID) or of an OUT folder's tasks.

    The task directories stay; a task cleaned needs a rebuild before it can be graded."""
    from taskfoundry.catalog.clean import clean
    from taskfoundry.catalog.grading import engine

    try:
        client = engine()
        try:
            done = clean(target, client, dry_run=dry_run)
        finally:
            client.close()
    except TaskfoundryError as exc:
        _fail(exc)
    verb = "would remove" if dry_run else "removed"
    click.echo(f"{verb} {len(done.tags)} image tags and {len(done.dirs)} cache folders of {target}")
    for name, why in sorted(done.kept.items()):
        click.echo(f"  kept {name}: {why}")
    about = "about " if dry_run else ""
    click.echo(
        f"{'would free' if dry_run else 'freed'} {about}{_bytes(done.freed)} "
        f"({_bytes(done.image_bytes)} of images, {_bytes(done.file_bytes)} of files)"
    )


@click.command("export")
@click.argument("path", type=FolderOrStore())
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True, help="whose loader reads DEST")
@click.option("--id", "ids", multiple=True, help="export this task id only (repeatable)")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="the first N tasks (by id)")
@click.option("--below-gate", is_flag=True, help="export tasks below their acceptance gate too")
def export_command(
    path: Path, dest: Path, fmt: str, ids: tuple[str, ...], limit: int | None, below_gate: bool
) -> None:
    """Write PATH's program tasks (an OUT folder, its tasks/ or a release) into DEST in the layout
    another harness reads: `programbench` for ProgramBench's evaluator, mini-swe-agent and
    OpenHands (DEST: the `data/tasks` folder of the harness's installed `programbench`)."""
    from taskfoundry.catalog.export import export_programbench

    try:
        cat = Catalog.load(path).filter(ids=ids or None)
        unknown = sorted(set(ids) - set(cat.ids()))
        if unknown:
            raise ReleaseError(f"no task {', '.join(unknown)} in {path}")
        cat = cat if below_gate else cat.gated()
        for error in cat.errors:
            click.echo(f"taskfoundry: left out {error.path}: {error.message.splitlines()[0]}", err=True)
        done = export_programbench(cat.limit(limit) if limit is not None else cat, dest)
    except TaskfoundryError as exc:
        _fail(exc)
    for task_id, why in sorted(done.skipped.items()):
        click.echo(f"taskfoundry: skipped {task_id}: {why}", err=True)
    click.echo(f"exported {len(done.written)} tasks to {dest}: {', '.join(done.written)}")
    _say_missing_images(done.written, done.env["PROGRAMBENCH_DOCKER_ORG"])
    click.echo("set these where the harness and its evaluator run:")
    for name, value in done.env.items():
        click.echo(f"  export {name}={shlex.quote(value)}")


def _say_missing_images(task_ids: list[str], namespace: str) -> None:
    """The harness pulls what it cannot find, and nothing can be pulled: say so now."""
    from taskfoundry.catalog.grading import engine
    from taskfoundry.naming import programbench_image

    try:
        client = engine()
    except TaskfoundryError as exc:
        click.echo(f"taskfoundry: could not check the images: {exc}", err=True)
        return
    try:
        for task_id in task_ids:
            image = programbench_image(task_id, namespace)
            if not image_exists(client, image):
                click.echo(f"taskfoundry: {image} is not in this engine: `release load` it first", err=True)
    finally:
        client.close()


def _bytes(n: int) -> str:
    """`n` bytes as a reader says them (rich's decimal units: 1.6 GB)."""
    from rich.filesize import decimal

    return decimal(n)
