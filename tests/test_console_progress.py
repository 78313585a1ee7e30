"""The build's progress display (issue 59): the running stage named with its counts and the
time they leave, where a resumed build resumes, and log lines printed above the bars."""

from __future__ import annotations

import io
import logging
import sys

import pytest
from rich.console import Console
from rich.progress import Progress

from taskfoundry import progress
from taskfoundry.cli_progress import RichProgress, shown_progress

SRC = "examples/csvq"


def _descriptions(bars: Progress) -> list[str]:
    return [t.description for t in bars.tasks]


def test_the_bar_names_the_running_stage_and_counts_inside_it() -> None:
    out = io.StringIO()
    bars = Progress(console=Console(file=out, width=200))
    sink = RichProgress(bars)
    with progress.listening(sink):
        with progress.working_on(SRC, "source"):
            pass
        progress.stage_done(SRC, "source", False, 0.1)
        with progress.working_on(SRC, "generate"):
            assert _descriptions(bars) == [f"{SRC}: generate"]  # not the last stage that ended
            sink.sources[SRC].started -= 20  # as if 20 s in
            progress.count("probes", 100, 400)
            (text,) = _descriptions(bars)
            assert text == f"{SRC}: generate · probes 100/400 · ~60 s left"
    progress.count("probes", 5, 10)  # no stage running: nobody's count
    assert _descriptions(bars) == [text]
    assert "resuming" not in out.getvalue()


def test_a_resumed_build_says_where_it_resumes_once_a_stage_runs() -> None:
    out = io.StringIO()
    bars = Progress(console=Console(file=out, width=200))
    with progress.listening(RichProgress(bars)):
        for stage, cached in [("source", False), ("build", True), ("cleanroom", True)]:
            with progress.working_on(SRC, stage):
                pass
            progress.stage_done(SRC, stage, cached, 0.01)
        with progress.working_on(SRC, "generate"):
            assert "resuming" not in out.getvalue()  # generate may come from the cache too
            progress.advance("probes", 40)
            progress.advance("probes", 40, total=200)
        assert "probes 80/200" in _descriptions(bars)[0]
    line = f"{SRC}: resuming after cleanroom (from the cache: build, cleanroom)"
    assert out.getvalue().count(line) == 1, out.getvalue()


class _Terminal(logging.StreamHandler):  # type: ignore[type-arg]
    """A terminal handler (on sys.stderr) that remembers what it wrote itself."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.wrote: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.wrote.append(record.getMessage())
        super().emit(record)


def test_log_lines_print_above_the_bars_not_through_them(capsys: pytest.CaptureFixture[str]) -> None:
    terminal = _Terminal()
    terminal.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(terminal)
    long = "docker-build: 2 slots taken, and another command is running on this database: left " * 2
    try:
        with shown_progress(True):
            logging.getLogger("taskfoundry.flows.limits").warning(long)
        logging.getLogger("taskfoundry.flows.limits").warning("after the bars")
    finally:
        root.removeHandler(terminal)
    assert terminal.wrote == ["after the bars"]  # beside the bars, the handler wrote nothing itself
    assert f"{long}\n" in capsys.readouterr().err  # the bars' console printed it, on one line
