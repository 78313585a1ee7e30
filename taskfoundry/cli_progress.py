"""The command line's progress display: rich bars on stderr while a flow (or a release) runs,
fed by the events of `taskfoundry.progress`; log lines print above the bars."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from taskfoundry import progress


@dataclass
class _Shown:
    """What the display knows of one source in flight."""

    bar: TaskID
    stage: str = ""
    started: float = 0.0
    reused: list[str] = field(default_factory=list)
    fresh: bool = False  # a stage besides the source ran, not from the cache
    pending: bool = False  # stages came from the cache: say where it resumes once one runs


class RichProgress:
    """A progress sink: one bar per source in flight, named after its running stage with the
    counts inside it and the time they leave; one bar for the batch."""

    def __init__(self, bars: Progress) -> None:
        self.bars = bars
        self.batch: TaskID | None = None
        self.sources: dict[str, _Shown] = {}
        self.lock = threading.Lock()

    def _shown(self, source: str, stage: str = "") -> _Shown:
        with self.lock:
            if source not in self.sources:  # a build's bar counts its stages; a release's, nothing
                total = len(progress.STAGES) if stage in progress.STAGES else None
                bar = self.bars.add_task(_short(source), total=total)
                self.sources[source] = _Shown(bar)
            return self.sources[source]

    def batch_started(self, total: int) -> None:
        self.batch = self.bars.add_task("sources", total=total)

    def stage_started(self, source: str, stage: str) -> None:
        shown = self._shown(source, stage)
        shown.stage, shown.started = stage, time.monotonic()
        shown.pending = bool(shown.reused) and not shown.fresh
        self.bars.update(shown.bar, description=f"{_short(source)}: {stage}")

    def counted(self, source: str, what: str, done: int, total: int | None) -> None:
        shown = self._shown(source)
        self._resumed(source, shown)
        of = f"{done}/{total}" if total else str(done)
        left = _left(time.monotonic() - shown.started, done, total)
        text = f"{_short(source)}: {shown.stage} · {what} {of}{f' · ~{left} left' if left else ''}"
        self.bars.update(shown.bar, description=text)

    def stage_done(self, source: str, stage: str, cached: bool, seconds: float) -> None:
        shown = self._shown(source)
        if cached:
            shown.reused.append(stage)
        else:
            self._resumed(source, shown)
            shown.fresh = shown.fresh or stage != "source"
        how = "from the cache" if cached else f"done in {seconds:.0f}s"
        self.bars.update(shown.bar, advance=1, description=f"{_short(source)}: {stage} {how}")

    def _resumed(self, source: str, shown: _Shown) -> None:
        """Once a stage runs after stages the cache gave: where this build resumes."""
        if shown.pending:
            shown.pending = False
            reused = ", ".join(shown.reused)
            self.bars.console.print(
                f"{source}: resuming after {shown.reused[-1]} (from the cache: {reused})",
                markup=False,
                soft_wrap=True,  # one line, as a log line is: the terminal wraps it, not rich
            )

    def source_done(self, source: str, ok: bool, detail: str) -> None:
        mark = "[green]done[/green]" if ok else "[red]failed[/red]"
        self.bars.console.print(f"{mark} {escape(source)}: {escape(detail)}", soft_wrap=True)
        with self.lock:
            shown = self.sources.pop(source, None)
        if shown is not None:
            self.bars.remove_task(shown.bar)
        if self.batch is not None:
            self.bars.update(self.batch, advance=1)


def _left(elapsed: float, done: int, total: int | None) -> str:
    """The time the rest of a count takes at its pace so far ('' when that is not known)."""
    if not total or done <= 0 or done >= total or elapsed < 1:
        return ""
    seconds = elapsed / done * (total - done)
    return f"{seconds / 60:.0f} min" if seconds > 90 else f"{seconds:.0f} s"


def _short(source: str, width: int = 40) -> str:
    return source if len(source) <= width else "…" + source[-(width - 1) :]


class _AboveTheBars(logging.Filter):
    """On a terminal handler while bars show: prints the record above them through their
    console (a line written to the terminal beside rich would land in the bar), drops it there."""

    def __init__(self, handler: logging.Handler, console: Console) -> None:
        super().__init__()
        self.handler, self.console = handler, console

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= self.handler.level:
            self.console.print(self.handler.format(record), markup=False, highlight=False, soft_wrap=True)
        return False


def _terminal_handlers() -> list[logging.Handler]:
    """The handlers that write to the terminal: the root logger's and Prefect's own (which does
    not propagate); not a file's, nor one that captures into memory (pytest's)."""
    loggers = [logging.getLogger(), logging.getLogger("prefect")]
    terminal = {id(s) for s in (sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__)}
    return [
        h
        for lg in loggers
        for h in lg.handlers
        if isinstance(h, logging.StreamHandler) and id(getattr(h, "stream", None)) in terminal
    ]


@contextmanager
def _logs_above(console: Console) -> Iterator[None]:
    diverted = [(h, _AboveTheBars(h, console)) for h in _terminal_handlers()]
    for handler, divert in diverted:
        handler.addFilter(divert)
    try:
        yield
    finally:
        for handler, divert in diverted:
            handler.removeFilter(divert)


@contextmanager
def shown_progress(enabled: bool = True) -> Iterator[None]:
    """Show progress bars on stderr while the body runs (nothing when `enabled` is false);
    log records print above them."""
    if not enabled:
        yield
        return
    bars = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )
    with bars, _logs_above(bars.console), progress.listening(RichProgress(bars)):
        yield
