"""In-process progress events, for a command line that shows bars while a flow runs.

The flow says when a stage starts and ends (`stage_started`, `stage_done`) and when a source is
finished (`source_done`); stage code counts what it does inside (`count`, `advance`: probes run,
mutants analysed) without knowing which source it works for: `working_on` marks the source of
the stage running in this context. Whoever listens (the CLI's rich display) registers with
`listening`. With no listener (a worker, a served deployment) the calls do nothing: the
dashboard's artifacts carry the progress there.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

log = logging.getLogger(__name__)

STAGES = ("source", "build", "cleanroom", "generate", "lint", "filter", "mutation", "package")


class ProgressSink(Protocol):
    def batch_started(self, total: int) -> None: ...

    def stage_started(self, source: str, stage: str) -> None: ...

    def counted(self, source: str, what: str, done: int, total: int | None) -> None: ...

    def stage_done(self, source: str, stage: str, cached: bool, seconds: float) -> None: ...

    def source_done(self, source: str, ok: bool, detail: str) -> None: ...


_sinks: list[ProgressSink] = []
_lock = threading.Lock()
_source: contextvars.ContextVar[str | None] = contextvars.ContextVar("progress_source", default=None)
_tallies: dict[tuple[str, str], tuple[int, int | None]] = {}


@contextmanager
def listening(sink: ProgressSink) -> Iterator[ProgressSink]:
    with _lock:
        _sinks.append(sink)
    try:
        yield sink
    finally:
        with _lock:
            _sinks.remove(sink)


def _each() -> list[ProgressSink]:
    with _lock:
        return list(_sinks)


def batch_started(total: int) -> None:
    for sink in _each():
        sink.batch_started(total)


@contextmanager
def working_on(source: str, stage: str) -> Iterator[None]:
    """Counts made in this context (and contexts copied from it) are `source`'s."""
    token = _source.set(source)
    _forget(source)  # a new stage counts afresh
    for sink in _each():
        sink.stage_started(source, stage)
    try:
        yield
    finally:
        _source.reset(token)
        _forget(source)  # a long-lived process (serve) keeps no count of a stage that ended


def _forget(source: str) -> None:
    with _lock:
        for key in [k for k in _tallies if k[0] == source]:
            del _tallies[key]


def count(what: str, done: int, total: int | None = None) -> None:
    """The running stage has done `done` of `total` (None: no known end) `what`s."""
    source = _source.get()
    if source is None:
        return
    with _lock:
        _tallies[(source, what)] = (done, total)
    for sink in _each():
        sink.counted(source, what, done, total)


def advance(what: str, n: int = 1, total: int | None = None) -> None:
    """`n` more `what`s done (from any thread whose context was copied from the stage's)."""
    source = _source.get()
    if source is None:
        return
    with _lock:
        done, known = _tallies.get((source, what), (0, None))
        done, known = done + n, total if total is not None else known
        _tallies[(source, what)] = (done, known)
    for sink in _each():
        sink.counted(source, what, done, known)


def stage_done(source: str, stage: str, cached: bool, seconds: float) -> None:
    log.info("%s: stage %s %s in %.1fs", source, stage, "cached" if cached else "done", seconds)
    for sink in _each():
        sink.stage_done(source, stage, cached, seconds)


def source_done(source: str, ok: bool, detail: str) -> None:
    for sink in _each():
        sink.source_done(source, ok, detail)
