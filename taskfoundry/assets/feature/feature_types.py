"""Exact return types of a feature's interface functions, per test (standard library only).

Recorded while the reference passes its F2P tests (validation: this file loaded as the
pytest plugin tf_feature_types, TF_TYPES_RECORD naming the JSON it writes), and observed
again at grading by the guard (assets/feature_guard.py), which reports what it saw; the
host compares. A value's type is spelled from `type()` only (never `isinstance` or
`__class__`, which a submitted class controls): `builtins.str`, a subclass is another
name; containers of the built-in kinds name their elements' types too
(`builtins.list[builtins.str]`), so an object that claims equality hides nowhere.

Returns are seen with sys.monitoring (PY_RETURN on the functions' code objects): however
a test imports or calls the function, its returns are seen.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import types
from typing import Any

TOOLS = (4, 3, 5)  # sys.monitoring tool ids (0 debugger, 1 coverage, 2 profiler by convention)
_CONTAINERS = (list, tuple, set, frozenset, dict)
_MAX_ITEMS = 50
_MAX_DEPTH = 3


def describe(value: Any, depth: int = 0) -> str:
    """The exact type of `value`; for built-in containers, their elements' types too."""
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}"
    if kind not in _CONTAINERS or depth >= _MAX_DEPTH:
        return name
    if kind is dict:
        items = list(dict.items(value))[:_MAX_ITEMS]
        keys = sorted({describe(k, depth + 1) for k, _ in items})
        values = sorted({describe(v, depth + 1) for _, v in items})
        return f"{name}[{'|'.join(keys)}:{'|'.join(values)}]"
    inner = sorted({describe(v, depth + 1) for v in list(value)[:_MAX_ITEMS]})
    return f"{name}[{'|'.join(inner)}]"


def targets(interface: list[dict[str, str]]) -> dict[types.CodeType, str]:
    """The code objects of the interface's functions and methods (imported now), by name."""
    found: dict[types.CodeType, str] = {}
    for obj in interface:
        module = sys.modules.get(obj["module"])
        if module is None:
            try:
                module = importlib.import_module(obj["module"])
            except Exception:  # noqa: BLE001 - a module that does not import has nothing to watch
                continue
        value: Any = module
        for part in obj["name"].split("."):
            value = getattr(value, part, None)
        if isinstance(value, type):
            members = {f"{obj['name']}.{k}": v for k, v in vars(value).items() if not k.startswith("__")}
        else:
            members = {obj["name"]: value}
        for name, member in members.items():
            func = member.__func__ if isinstance(member, classmethod | staticmethod) else member
            func = func.fget if isinstance(func, property) else func
            code = getattr(func, "__code__", None)
            if isinstance(code, types.CodeType):
                found[code] = f"{obj['module']}:{name}"
    return found


class Watch:
    """Every return of the target code objects, by the test running at the time."""

    def __init__(self) -> None:
        self.current = ""
        self.seen: dict[str, dict[str, set[str]]] = {}
        self.names: dict[types.CodeType, str] = {}

    def start(self, names: dict[types.CodeType, str]) -> None:
        self.names = names
        mon = sys.monitoring  # type: ignore[attr-defined]  # 3.12+: the task images have 3.13
        for tool in TOOLS:  # one a test's own coverage or debugger does not hold
            if mon.get_tool(tool) is None:
                break
        else:
            return  # nothing seen: the host reports the tests `type_unobserved`
        mon.use_tool_id(tool, "tf_feature_types")
        mon.register_callback(tool, mon.events.PY_RETURN, self._returned)
        for code in names:
            mon.set_local_events(tool, code, mon.events.PY_RETURN)

    def _returned(self, code: types.CodeType, offset: int, value: Any) -> None:
        name = self.names.get(code)
        if name and self.current:
            self.seen.setdefault(self.current, {}).setdefault(name, set()).add(describe(value))

    def take(self, test: str) -> dict[str, list[str]]:
        return {k: sorted(v) for k, v in self.seen.pop(test, {}).items()}


# ---- the recording plugin (validation) -----------------------------------------------------
_RECORD = os.environ.get("TF_TYPES_RECORD", "")
_WATCH = Watch()
_RECORDED: dict[str, dict[str, list[str]]] = {}


def junit_id(nodeid: str) -> str:
    from _pytest.junitxml import mangle_test_address

    return ".".join(mangle_test_address(nodeid))


def pytest_collection_finish(session: Any) -> None:
    if _RECORD:
        _WATCH.start(targets(json.loads(os.environ.get("TF_TYPES_TARGETS", "[]"))))


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _WATCH.current = junit_id(nodeid)


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call":
        seen = _WATCH.take(junit_id(report.nodeid))
        if seen and report.outcome == "passed":
            _RECORDED[junit_id(report.nodeid)] = seen


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if _RECORD:
        with open(_RECORD, "w", encoding="utf-8") as out:
            json.dump(_RECORDED, out)
