"""pytest plugin (`-p feature_trace`): which project functions each test file's tests call.

Runs inside the environment image with the repository at TF_TRACE_ROOT. While a test runs
(setup, call, teardown), `sys.setprofile` records every call of a function whose code is
under the root and not test code, keyed `relative/path.py::qualname`, and the nearest
project caller of each (the call graph's edges). Nested functions, lambdas and module
code count as their enclosing function. Calls made before the first test, while conftests
and test modules import the project (module-level code), are recorded under the key
TF_TRACE_COLLECTION: no test reaches them, yet the whole suite needs them. At the end it
writes TF_TRACE_OUT: {"files": {test file: {"calls": [...], "edges": [[caller, callee], ...]}}}.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Generator
from types import CodeType, FrameType
from typing import Any

import pytest

ROOT = os.environ.get("TF_TRACE_ROOT", "/workspace").rstrip("/") + "/"
OUT = os.environ.get("TF_TRACE_OUT", "/tmp/tf-trace.json")
COLLECTION = os.environ.get("TF_TRACE_COLLECTION", "<collection>")
TEST_DIRS = {"tests", "test", "testing"}
_keys: dict[CodeType, str | None] = {}
_files: dict[str, dict[str, set[Any]]] = {}
_current: dict[str, set[Any]] = {}


def _key(code: CodeType) -> str | None:
    if code in _keys:
        return _keys[code]
    key = None
    path = code.co_filename
    if path.startswith(ROOT) and path.endswith(".py"):
        rel = path[len(ROOT) :]
        parts = rel.split("/")
        name = parts[-1]
        test = name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
        qualname = getattr(code, "co_qualname", code.co_name)
        if not test and not TEST_DIRS.intersection(parts[:-1]) and "<" not in qualname:
            key = f"{rel}::{qualname}"
    _keys[code] = key
    return key


def _profile(frame: FrameType, event: str, arg: object) -> None:
    if event != "call" or not _current:
        return
    key = _key(frame.f_code)
    if key is None:
        return
    _current["calls"].add(key)
    back, depth = frame.f_back, 0
    while back is not None and depth < 12:
        caller = _key(back.f_code)
        if caller is not None:
            _current["edges"].add((caller, key))
            return
        back, depth = back.f_back, depth + 1


def _collecting() -> None:
    if not _current:
        _current.update(_files.setdefault(COLLECTION, {"calls": set(), "edges": set()}))
        sys.setprofile(_profile)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: Any, args: list[str]) -> None:
    _collecting()  # before the conftests import the project


def pytest_configure(config: pytest.Config) -> None:
    _collecting()  # in case the hook above came too late for this plugin


def pytest_collection_finish(session: pytest.Session) -> None:
    sys.setprofile(None)
    _current.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    file = item.nodeid.split("::", 1)[0]
    record = _files.setdefault(file, {"calls": set(), "edges": set()})
    _current.update(record)
    sys.setprofile(_profile)
    threading.setprofile(_profile)  # type: ignore[arg-type]
    try:
        yield
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        _current.clear()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    data = {
        file: {"calls": sorted(rec["calls"]), "edges": sorted(list(e) for e in rec["edges"])}
        for file, rec in _files.items()
    }
    with open(OUT, "w") as handle:
        json.dump({"files": data}, handle)
