"""In-process progress events, for a command line that shows bars while a flow runs.

Flows call `stage_done` / `source_done`; whoever listens (the CLI's rich display)
registers with `listening`. With no listener (a worker, a served deployment) the
calls do nothing: the dashboard's artifacts carry the progress there.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

log = logging.getLogger(__name__)

STAGES = ("source", "build", "cleanroom", "generate", "lint", "filter", "mutation", "package")


class ProgressSink(Protocol):
    def batch_started(self, total: int) -> None: ...

    def stage_done(self, source: str, stage: str, cached: bool, seconds: float) -> None: ...

    def source_done(self, source: str, ok: bool, detail: str) -> None: ...


_sinks: list[ProgressSink] = []
_lock = threading.Lock()


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


def stage_done(source: str, stage: str, cached: bool, seconds: float) -> None:
    log.info("%s: stage %s %s in %.1fs", source, stage, "cached" if cached else "done", seconds)
    for sink in _each():
        sink.stage_done(source, stage, cached, seconds)


def source_done(source: str, ok: bool, detail: str) -> None:
    for sink in _each():
        sink.source_done(source, ok, detail)
