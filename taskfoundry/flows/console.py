"""The command line's view of a run: rich progress bars on stderr, a summary table on stdout."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from taskfoundry.flows.report import failure_text, run_table
from taskfoundry.flows.summary import RunSummary


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
    console.print(counts + summary.gate_text(), highlight=False)
    for r in summary.rows:
        if r.status == "failed":
            console.print(
                f"failed: {r.source}: {failure_text(r)}", highlight=False, markup=False, soft_wrap=True
            )
