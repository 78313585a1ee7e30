"""The command line's view of a run: rich progress bars on stderr, a summary table on stdout."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from taskfoundry.flows import progress
from taskfoundry.flows.report import failure_text, run_table
from taskfoundry.flows.summary import RunSummary


class RichProgress:
    """A progress sink: one bar per source in flight (its stages), one for the batch."""

    def __init__(self, bars: Progress) -> None:
        self.bars = bars
        self.batch: TaskID | None = None
        self.sources: dict[str, TaskID] = {}
        self.lock = threading.Lock()

    def _bar(self, source: str) -> TaskID:
        with self.lock:
            if source not in self.sources:
                self.sources[source] = self.bars.add_task(_short(source), total=len(progress.STAGES))
            return self.sources[source]

    def batch_started(self, total: int) -> None:
        self.batch = self.bars.add_task("sources", total=total)

    def stage_done(self, source: str, stage: str, cached: bool, seconds: float) -> None:
        how = "cached" if cached else f"{seconds:.0f}s"
        self.bars.update(self._bar(source), advance=1, description=f"{_short(source)}: {stage} ({how})")

    def source_done(self, source: str, ok: bool, detail: str) -> None:
        mark = "[green]done[/green]" if ok else "[red]failed[/red]"
        self.bars.console.print(f"{mark} {source}: {detail}")
        with self.lock:
            bar = self.sources.pop(source, None)
        if bar is not None:
            self.bars.remove_task(bar)
        if self.batch is not None:
            self.bars.update(self.batch, advance=1)


def _short(source: str, width: int = 40) -> str:
    return source if len(source) <= width else "…" + source[-(width - 1) :]


@contextmanager
def shown_progress(enabled: bool = True) -> Iterator[None]:
    """Show progress bars on stderr while the body runs (nothing when `enabled` is false)."""
    if not enabled:
        yield
        return
    bars = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    with bars, progress.listening(RichProgress(bars)):
        yield


def print_summary(summary: RunSummary) -> None:
    """The run summary as a table on stdout, then one plain line per failure."""
    table = Table(title=f"{summary.flow}: {len(summary.rows)} sources, {summary.seconds:.0f} s")
    rows = run_table(summary)
    columns = ["source", "status", "task", "kept", "coverage", "seconds"]
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(str(row[c]) for c in columns))
    console = Console(soft_wrap=False)
    console.print(table)
    counts = ", ".join(f"{summary.count(s)} {s}" for s in ("built", "skipped", "failed", "cancelled"))
    console.print(counts, highlight=False)
    for r in summary.rows:
        if r.status == "failed":
            console.print(
                f"failed: {r.source}: {failure_text(r)}", highlight=False, markup=False, soft_wrap=True
            )
