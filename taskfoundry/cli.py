"""The `taskfoundry` command line. Config: defaults, then --config YAML, then flags (merged here).

Imports here are light: `build`, `build-many` and `refresh` start their Prefect server first
(`taskfoundry.cli_server`), and what this module imports at the top delays that start. The
other packages' commands are imported when named (`SUBCOMMANDS`), the config and the flows
inside the commands.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from taskfoundry import runlog
from taskfoundry.cli_server import embedded_server
from taskfoundry.dotted import load
from taskfoundry.errors import ConfigError, TaskfoundryError
from taskfoundry.kinds.registry import KINDS, load_kind
from taskfoundry.prefect_env import before_prefect

if TYPE_CHECKING:
    from taskfoundry.config import Config

before_prefect()  # before any command imports Prefect: no telemetry notice on the terminal

# commands other packages define: name -> "module:attribute" (a command, or a function making it)
SUBCOMMANDS = {
    "lint": "taskfoundry.linters.cli:lint",
    "eval": "taskfoundry.evaluate.cli:eval_command",
    "audit": "taskfoundry.kinds.program.cleanroom.audit:audit_command",
    "tasks": "taskfoundry.cli:tasks_with_publish",
    "release": "taskfoundry.catalog.cli:release_group",
    "clean": "taskfoundry.catalog.cli:clean_command",
    "export": "taskfoundry.catalog.cli:export_command",
    "discover": "taskfoundry.cli:discover_with_config",
    "solve": "taskfoundry.solve.cli:solve_command",
    "run": "taskfoundry.cli:run_with_flow",
}


class LazyGroup(click.Group):
    """A group whose `SUBCOMMANDS` are imported only when one of them runs or help lists them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *SUBCOMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in SUBCOMMANDS:
            return super().get_command(ctx, cmd_name)
        found: click.Command | Callable[[], click.Command] = load(SUBCOMMANDS[cmd_name])
        return found if isinstance(found, click.Command) else found()


CONFIG_OPTION = click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, path_type=Path),
    help="YAML config (fields of taskfoundry.config.Config)",
)
OUT_OPTION = click.option(
    "--out", default=None, help="output dir, or an object store URL (s3://bucket/prefix) [./out]"
)


@click.group(cls=LazyGroup)
@click.version_option(package_name="taskfoundry", message="taskfoundry %(version)s")
@click.option("-v", "--verbose", is_flag=True, help="log progress to stderr")
def main(verbose: bool) -> None:
    """Turn software repositories into ProgramBench-style benchmark tasks."""
    runlog.configure(verbose)


def _merge(base: dict[str, Any], updates: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in updates.items():
        if isinstance(value, dict):
            merged[key] = _merge(merged.get(key) or {}, value)
        elif value is not None:
            merged[key] = value
    return merged


def make_config(config_file: Path | None, **flags: Any) -> Config:
    """Defaults, then the YAML file, then the flags given (None: not given); `out` absolute (Config's
    own validator makes it so)."""
    from taskfoundry.config import Config, load_config
    from taskfoundry.models import error_text
    from taskfoundry.store import is_url

    config = load_config(config_file)
    try:
        config = Config.model_validate(_merge(config.model_dump(), flags))
    except ValueError as exc:
        raise ConfigError(f"bad option: {error_text(exc)}") from exc
    if flags.get("out") is not None and not is_url(flags["out"]):
        config = config.model_copy(update={"store": None})  # a local --out over a config's store URL
    return config


def _flag_out(out: str | Path | None) -> Path:
    """The local folder an `--out` flag names (a store URL's worker folder), else the default."""
    from taskfoundry.config import Config
    from taskfoundry.store import is_url, local_root

    if out is None:
        return Config().out
    return local_root(str(out)) if is_url(out) else Path(out)


def run_config(config_file: Path | None, command: str, **flags: Any) -> Config:
    """`make_config`, then this run's log file under the output dir (see `taskfoundry.runlog`)."""
    try:
        config = make_config(config_file, **flags)
    except ConfigError:
        runlog.start(_flag_out(flags.get("out")), command)  # no config to say where: the flag or default
        raise
    runlog.start(config.out, command)
    return config


def _fail(exc: TaskfoundryError, code: int = 1) -> NoReturn:
    """One line; the traceback goes to the run log, if this command has one, and the line names it."""
    log = runlog.record_failure(exc)
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())  # one line
    click.echo(f"taskfoundry: {text}" + (f" [details: {log}]" if log else ""), err=True)
    sys.exit(code)


def probe_budget(max_probes: int | None) -> dict[str, Any]:
    """--max-probes is the budget: the adaptive growth past it (explorer.growth) is off."""
    return {} if max_probes is None else {"max_probes": max_probes, "growth": 1.0}


def build_flags(
    seed: int | None, max_probes: int | None, resume: bool | None, mutants: int | None = None
) -> dict[str, Any]:
    return {
        "explorer": {"seed": seed, **probe_budget(max_probes)},
        "orchestration": {"resume": resume},
        "mutation": {"budget": mutants},
    }


MAX_PROBES = click.option(
    "--max-probes",
    type=click.IntRange(min=1),
    default=None,
    help="explorer probe budget: at most this many probes, the project's own tests' calls besides "
    "[600, growing while coverage grows]",
)
MUTANTS = click.option(
    "--mutants", type=click.IntRange(min=0), default=None, help="mutation analysis budget (0: none) [200]"
)


@main.command()
@click.argument("source")
@OUT_OPTION
@CONFIG_OPTION
@click.option("--seed", type=int, default=None, help="explorer seed")
@MAX_PROBES
@MUTANTS
@click.option("--executable", default=None, help="which built program is the task's")
@click.option(
    "--kind",
    type=click.Choice(list(KINDS)),
    default=None,
    help="task kind: program (ProgramBench), function, feature [program]",
)
@click.option(
    "--resume/--fresh",
    default=None,
    help="reuse the stage results of an earlier run of the same inputs [resume]",
)
@click.option("--progress/--no-progress", "show", default=True, help="progress bars on stderr")
def build(
    source: str,
    out: str | None,
    config_file: Path | None,
    seed: int | None,
    max_probes: int | None,
    mutants: int | None,
    executable: str | None,
    kind: str | None,
    resume: bool | None,
    show: bool,
) -> None:
    """Build one task from SOURCE (a local path, a git URL, or a registry source)."""
    try:  # bad input is refused before a server starts (a second, not 13-17 s: issue 59)
        config = run_config(
            config_file,
            "build",
            out=out,
            executable=executable,
            kind=kind,
            **build_flags(seed, max_probes, resume, mutants),
        )
        refuse_bad_source(source, config)
    except TaskfoundryError as exc:
        _fail(exc)
    with embedded_server() as server_ready:  # its start-up overlaps everything below
        from prefect.exceptions import PrefectException  # named by an except clause below

        try:
            from taskfoundry.cli_progress import shown_progress
            from taskfoundry.flows.build import build_flow
            from taskfoundry.flows.report import built_text

            load_kind(config.kind)  # an unknown kind fails here, before a flow starts
            server_ready()
            with shown_progress(show):
                task_dirs = build_flow(source, config)
        except TaskfoundryError as exc:
            _fail(exc)
        except PrefectException as exc:
            error = TaskfoundryError(f"flow failed: {exc}")
            error.__cause__ = exc  # its traceback goes to the run log
            _fail(error)
        echo_markdown(built_text(task_dirs, config.tasks_dir), raw=len(task_dirs) != 1)  # a list: as it is
        if config.store is not None:
            click.echo(f"published to {config.store}/tasks/: {', '.join(d.name for d in task_dirs)}")


def refuse_bad_source(source: str, config: Config) -> None:
    """A bad source refused as its stage would refuse it, without a server or a flow run."""
    from taskfoundry.errors import SourceError, StageError
    from taskfoundry.sources.resolve import check_source

    try:
        check_source(source, config.sources)
    except SourceError as exc:
        raise StageError.wrap("source", exc) from exc


def read_sources(args: tuple[str, ...]) -> list[str]:
    """Each argument is a SOURCE, or a file listing sources: one a line, `#` starting a comment
    at the start of a line or after a space (`URL#ref` stays whole)."""
    from taskfoundry.flows.catalog import absolute_source

    sources: list[str] = []
    for arg in args:
        path = Path(arg)
        if not path.is_file():
            sources.append(arg)
            continue
        for line in path.read_text().splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if line:
                sources.append(absolute_source(line, path.parent))
    return sources


def batch_flags(concurrency: int | None, max_failures: float | None) -> dict[str, Any]:
    return {"orchestration": {"concurrency": concurrency, "max_failures": max_failures}}


CONCURRENCY = click.option(
    "--concurrency", type=click.IntRange(min=1), default=None, help="sources built at once [2]"
)
MAX_FAILURES = click.option(
    "--max-failures",
    type=click.FloatRange(min=0),
    default=None,
    help="end early past this many failures: a fraction (<1) or a count",
)


@main.command("build-many")
@click.argument("sources", nargs=-1, required=True)
@OUT_OPTION
@CONFIG_OPTION
@CONCURRENCY
@MAX_FAILURES
@click.option("--seed", type=int, default=None, help="explorer seed")
@MAX_PROBES
@MUTANTS
@click.option("--resume/--fresh", default=None, help="reuse stage results of earlier runs [resume]")
@click.option("--progress/--no-progress", "show", default=True, help="progress bars on stderr")
def build_many(
    sources: tuple[str, ...],
    out: str | None,
    config_file: Path | None,
    concurrency: int | None,
    max_failures: float | None,
    seed: int | None,
    max_probes: int | None,
    mutants: int | None,
    resume: bool | None,
    show: bool,
) -> None:
    """Build a task from each SOURCE (or each line of a SOURCES_FILE); exit 1 if any failed."""

    def run(config: Config) -> Any:
        from taskfoundry.flows.many import build_many_flow

        return build_many_flow(read_sources(sources), config)

    flags = _merge(batch_flags(concurrency, max_failures), build_flags(seed, max_probes, resume, mutants))
    _run_batch(
        run,
        "build-many",
        config_file,
        show,
        out=out,
        **flags,
    )


def _run_batch(run: Any, command: str, config_file: Path | None, show: bool, **flags: Any) -> None:
    with embedded_server() as server_ready:  # first: its start-up overlaps everything below
        from taskfoundry.flows.summary import FailureBudgetExceeded

        try:
            config = run_config(config_file, command, **flags)
            from taskfoundry.cli_progress import shown_progress
            from taskfoundry.flows.console import print_summary

            server_ready()
            with shown_progress(show):
                summary = run(config)
        except FailureBudgetExceeded as exc:
            print_summary(exc.summary)
            _fail(exc)
        except TaskfoundryError as exc:
            _fail(exc)
        print_summary(summary)
    if not summary.ok:
        click.echo(f"taskfoundry: details of the failures: {runlog.current()}", err=True)
    sys.exit(0 if summary.ok else 1)


@main.command()
@click.option(
    "--catalog",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="YAML list of sources [orchestration.refresh.catalog, else discovery's]",
)
@OUT_OPTION
@CONFIG_OPTION
@CONCURRENCY
@MAX_FAILURES
@MAX_PROBES
@click.option("--progress/--no-progress", "show", default=True, help="progress bars on stderr")
def refresh(
    catalog: Path | None,
    out: str | None,
    config_file: Path | None,
    concurrency: int | None,
    max_failures: float | None,
    max_probes: int | None,
    show: bool,
) -> None:
    """Build the catalog's sources not built yet at their current commit or version (no catalog
    and no configured sources: what discovery finds since the last refresh)."""

    def run(config: Config) -> Any:
        from taskfoundry.flows.refresh import choose_catalog, refresh_flow

        chosen, note = choose_catalog(config, catalog)
        click.echo(f"refresh: {note}", err=True)
        return refresh_flow(config, chosen, chosen=True)

    flags = batch_flags(concurrency, max_failures)
    _run_batch(
        run,
        "refresh",
        config_file,
        show,
        out=out,
        explorer=probe_budget(max_probes),
        **flags,
    )


@main.command()
@OUT_OPTION
@CONFIG_OPTION
def serve(out: Path | None, config_file: Path | None) -> None:
    """Serve refresh (on its cron schedule), build, build-many and evaluate as deployments."""
    from taskfoundry.flows.serve import serve_all

    try:
        serve_all(make_config(config_file, out=out))
    except TaskfoundryError as exc:
        _fail(exc)


@main.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--as-of",
    type=click.DateTime(),
    default=None,
    help="only the tasks released (else created) before this date",
)
def index(out: Path, as_of: datetime | None) -> None:
    """Rebuild OUT/index.json from OUT/tasks and print its tasks with their dates."""
    from taskfoundry.flows.index import as_of as cut
    from taskfoundry.flows.index import record

    entries = list(record(out).tasks.values())
    if as_of is not None:
        entries = cut(record(out), as_of)
    for e in entries:
        released = f"{e.released_at:%Y-%m-%d}" if e.released_at else "-"
        mutation = "-" if e.mutation_score is None else f"{e.mutation_score:.1%}"
        click.echo(
            f"{e.task_id}\treleased {released}\tcreated {e.created_at:%Y-%m-%d}\t"
            f"mutation {mutation}\t{e.source}"
        )


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="the address to serve on")
@click.option("--port", type=int, default=4200, show_default=True)
def dashboard(host: str, port: int) -> None:
    """Prefect's dashboard on the database the runs wrote (past runs included); later build,
    build-many and refresh report to it while it runs. Ctrl-C stops it."""
    from taskfoundry.dashboard import serve_dashboard

    try:
        sys.exit(serve_dashboard(host, port, echo=click.echo))
    except TaskfoundryError as exc:
        _fail(exc)


@main.command()
def base() -> None:
    """Make the base image (debootstrap + docker import) unless its tag exists; print the tag."""
    from taskfoundry.config import Config
    from taskfoundry.images.base import ensure_base_image
    from taskfoundry.sandbox.docker import docker_client

    try:
        click.echo(ensure_base_image(Config().base, docker_client()))
    except TaskfoundryError as exc:
        _fail(exc)


@main.command()
@click.argument("task_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--markdown", is_flag=True, help="the summary as markdown (what a pipe or file gets)")
def show(task_dir: Path, markdown: bool) -> None:
    """Print a task's summary from its files, rendered for a terminal."""
    from taskfoundry.flows.report import summary_text

    try:
        echo_markdown(summary_text(task_dir), raw=markdown)
    except TaskfoundryError as exc:
        _fail(exc, code=2)


@main.command()
@click.argument("target", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--open", "open_", is_flag=True, help="open it in the web browser")
def report(target: Path, open_: bool) -> None:
    """Write the HTML report of a task (TARGET: OUT/tasks/ID, into its reports/) or of an eval run
    (TARGET: RUN_DIR), with its charts; print its path."""
    from taskfoundry.flows.html_report import write_report

    try:
        path = write_report(target)
    except TaskfoundryError as exc:
        _fail(exc, code=2)
    click.echo(str(path))
    if open_:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


def echo_markdown(text: str, raw: bool = False) -> None:
    """`text` (markdown) rendered on a terminal: headings, lists and tables drawn, no `**` or
    `|`; as it is (`raw`, or stdout a pipe or a file) where another program reads it."""
    if raw or not sys.stdout.isatty():
        click.echo(text)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(text))


def _publish_catalog(path: Path) -> str:
    from taskfoundry.flows.dashboard import publish_catalog_flow

    return publish_catalog_flow(path)


def tasks_with_publish() -> click.Command:
    """`taskfoundry tasks`, publishing its catalog with a flow (the catalog package has none)."""
    from taskfoundry.catalog.cli import tasks_command

    return tasks_command(_publish_catalog)


def _run_flow(task_dirs: list[Path], run_dir: Path, config: Any) -> list[Any]:
    from taskfoundry.flows.solve import run_flow

    return run_flow(task_dirs, run_dir, config)


def discover_with_config() -> click.Command:
    """`taskfoundry discover`, loading its config as every command here does."""
    from taskfoundry.discover.cli import discover_command

    return discover_command(make_config)


def run_with_flow() -> click.Command:
    """`taskfoundry run`, scheduling its tasks with the agent-run flow (`solve` has no flow)."""
    from taskfoundry.solve.cli import run_command

    return run_command(_run_flow, embedded_server)


if __name__ == "__main__":  # python -m taskfoundry.cli
    main()
