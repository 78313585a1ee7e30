"""The command line's logging: every record of a run in a log file, the terminal kept to what
the user must read.

A taskfoundry error (`taskfoundry.errors`) is bad input or a failed step: the command says it
in one line with the run log's path, so the tracebacks Prefect's task and flow engines log
for it go to the run log only (`--verbose` shows them on the terminal too). Any other
exception is a bug: its traceback still reaches the terminal.
"""

from __future__ import annotations

import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from taskfoundry.errors import TaskfoundryError

TERMINAL_FORMAT = "%(levelname)s %(name)s: %(message)s"
FILE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# the ids Prefect's run loggers put on their records: a task run's, else its flow run's
RUN_IDS = ("task_run_id", "flow_run_id")

_terminal: logging.Handler | None = None
_file: logging.FileHandler | None = None


def expected(exc: BaseException | None) -> bool:
    """An error the command reports in one line (a bug is anything else)."""
    return isinstance(exc, TaskfoundryError)


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to `sys.stderr` as it is at each record (a test runner swaps it per command)."""

    @property  # type: ignore[override]
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


class TerminalFilter(logging.Filter):
    """Drops the records of an expected failure: the one carrying its traceback, and the
    later ones of the same Prefect run (its `Finished in state Failed` line)."""

    def __init__(self) -> None:
        super().__init__()
        self.failed_runs: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        run = next((str(record.__dict__[k]) for k in RUN_IDS if record.__dict__.get(k)), None)
        if record.exc_info and expected(record.exc_info[1]):
            if run is not None:
                self.failed_runs.add(run)
            return False
        return run is None or run not in self.failed_runs


def configure(verbose: bool) -> None:
    """The terminal handler: warnings and errors (everything with `verbose`) on stderr."""
    global _terminal
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    if _terminal is not None:  # a command run again in one process (tests) replaces its handler
        root.removeHandler(_terminal)
    terminal = _terminal = StderrHandler()
    terminal.setFormatter(logging.Formatter(TERMINAL_FORMAT))
    if not verbose:
        terminal.setLevel(logging.WARNING)
    root.addHandler(terminal)
    logging.getLogger("httpx").setLevel(logging.WARNING)


def start(out: Path, command: str) -> Path:
    """Send every record of this run to `<out>/work/logs/<command>-<UTC time>-<pid>.log`, and
    from now on keep expected failures' records off the terminal (unless verbose): the
    command tells them in one line naming this file. Commands without a run log (`serve`)
    leave the terminal as it is."""
    global _file
    from taskfoundry.naming import work_dir  # its models (pydantic): not on every command's path

    logs = work_dir(out.resolve()) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    handler = logging.FileHandler(logs / f"{command}-{stamp}-{os.getpid()}.log", delay=True)
    handler.setFormatter(logging.Formatter(FILE_FORMAT))
    if _file is not None:
        logging.getLogger().removeHandler(_file)
        _file.close()
    logging.getLogger().addHandler(handler)
    _file = handler
    terminal = _terminal
    if terminal is not None and terminal.level >= logging.WARNING and not terminal.filters:
        terminal.addFilter(TerminalFilter())
    return Path(handler.baseFilename)


def current() -> Path | None:
    """This run's log file (None before `start`)."""
    return None if _file is None else Path(_file.baseFilename)


def record_failure(exc: TaskfoundryError) -> Path | None:
    """Write the failure and its traceback to the run log; its path (None: no run log)."""
    if _file is None:
        return None
    logging.getLogger("taskfoundry").error("%s", exc, exc_info=exc)
    _file.flush()
    return current()
