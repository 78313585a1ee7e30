"""The grader's witness inside a feature task's pytest run (installed as tf_feature_guard).

Loaded through PYTEST_PLUGINS while pytest parses its arguments, so before any conftest or
test module, and so before any submitted code, is imported. It writes one JSON line per
event to TF_GUARD_FD, the write end of a pipe whose reader is the root wrapper
(feature_guard_run.py): nothing written there can be taken back, and the worker's uid has
no path by which to reopen it once it is closed.

- each test phase's outcome as pytest reports it, when it is reported;
- `tamper`: pytest's, pluggy's and the builtins' functions are snapshotted here (and the
  registered hook implementations when the session starts) and compared after collection,
  after every test and at the end: a replaced function, class method, code object, module
  or an added hook implementation is named;
- `blocked`: an audit hook (it cannot be removed) refuses, from the lines the submission
  added (TF_GUARD_WATCH: path -> line numbers), frame access (sys._getframe,
  inspect.currentframe/stack, tb_frame, gi_frame...), gc.get_referrers/get_objects,
  sys.settrace/setprofile/monitoring and rewriting a function's code; the operation raises;
- `end` when the session finishes; a run without it ended early (os._exit).

Standard library and pytest only: it runs in the task's environment, whatever that holds.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import types
from typing import Any

import pytest

_write = os.write
_dumps = json.dumps
_FD = int(os.environ.pop("TF_GUARD_FD", "-1"))
if _FD >= 0:
    os.set_inheritable(_FD, False)  # the tests' own subprocesses do not get it


def _load_watch() -> dict[str, frozenset[int]]:
    path = os.environ.pop("TF_GUARD_WATCH", "")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            return {os.path.abspath(k): frozenset(v) for k, v in json.load(handle).items()}
    except (OSError, ValueError):
        return {}


WATCH = _load_watch()
_SENT: set[str] = set()


def emit(**record: Any) -> None:
    if _FD < 0:
        return
    data = (_dumps(record)[:3900] + "\n").encode()  # under PIPE_BUF: one write, never interleaved
    try:
        _write(_FD, data)
    except OSError:
        pass


# ---- the audit hook ------------------------------------------------------------------
_EVENTS = frozenset(
    {
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "gc.get_referrers",
        "gc.get_referents",
        "gc.get_objects",
        "sys.settrace",
        "sys.setprofile",
        "sys.monitoring.register_callback",
        "sys.monitoring.use_tool_id",
    }
)
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_INSPECT = os.path.abspath(getattr(sys.modules.get("inspect"), "__file__", "") or "inspect.py")
_busy = [False]


def _culprit() -> str | None:
    """file:line of the submitted line that caused the event (inspect's own frames are
    looked through: inspect.stack() from submitted code is submitted code's doing)."""
    frame: types.FrameType | None = sys._getframe(2)  # _culprit, _audit, then the caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename) == _INSPECT:
        frame = frame.f_back
    if frame is None:
        return None
    path = os.path.abspath(frame.f_code.co_filename)
    lines = WATCH.get(path)
    if lines is not None and frame.f_lineno in lines:
        return f"{path}:{frame.f_lineno}"
    return None


def _hooked(event: str, args: tuple[Any, ...]) -> bool:
    if event in _EVENTS:
        return True
    if event == "object.__getattr__":
        return len(args) > 1 and args[1] in _FRAME_ATTRS
    return event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__"


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _busy[0] or not WATCH:
        return
    _busy[0] = True
    try:
        where = _culprit() if _hooked(event, args) else None
    finally:
        _busy[0] = False
    if where:
        emit(k="blocked", event=event, where=where)
        raise RuntimeError(f"{event} from submitted code is refused by the grader ({where})")


sys.addaudithook(_audit)


# ---- integrity of the reporting machinery ----------------------------------------------
_WATCHED_MODULES = ("pytest", "_pytest", "pluggy", "junitparser", __name__)
_FUNCS = (types.FunctionType, classmethod, staticmethod, property)


def _inner(value: Any) -> Any:
    inner = value.__func__ if isinstance(value, classmethod | staticmethod) else value
    return inner.fget if isinstance(inner, property) else inner


def _ident(value: Any) -> tuple[int, int, str]:
    """(object, code object, file the code comes from)."""
    code = getattr(_inner(value), "__code__", None)
    return (id(value), id(code), code.co_filename) if code is not None else (id(value), 0, "")


State = dict[str, tuple[int, int, str]]


def _places() -> dict[str, tuple[Any, str]]:
    """Where every function and method defined in pytest's, pluggy's and this module, the
    modules themselves and the builtins live: name -> (namespace, key), found once."""
    places: dict[str, tuple[Any, str]] = {}
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name.split(".")[0] not in _WATCHED_MODULES:
            continue
        places[f"module {name}"] = (sys.modules, name)
        for attr, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and value.__module__ == name:
                places[f"{name}.{attr}"] = (vars(module), attr)
            elif isinstance(value, type) and value.__module__ == name:
                places[f"{name}.{attr}"] = (vars(module), attr)
                for key, member in list(vars(value).items()):
                    if isinstance(member, _FUNCS):
                        places[f"{name}.{attr}.{key}"] = (vars(value), key)  # a live view
    places |= {
        f"builtins.{attr}": (vars(builtins), attr) for attr, v in vars(builtins).items() if callable(v)
    }
    places |= {f"os.{attr}": (vars(os), attr) for attr in ("write", "_exit")}
    return places


def _module_state() -> State:
    """What is at each place now, by identity."""
    return {key: _ident(space.get(attr)) for key, (space, attr) in _PLACES.items()}


def _hook_state(config: Any) -> State:
    state: State = {}
    for name, caller in list(vars(config.pluginmanager.hook).items()):
        impls = getattr(caller, "get_hookimpls", None)
        if impls is None:
            continue
        for impl in impls():
            state[f"hook {name} {impl.plugin_name}"] = _ident(impl.function)
        state[f"hookexec {name}"] = (id(getattr(caller, "_hookexec", None)), 0, "")
    return state


def _changed(before: State, now: State, added: bool) -> list[str]:
    out = [key for key, ident in before.items() if now.get(key) != ident]
    if added:
        out += [f"{key} (added)" for key in now.keys() - before.keys()]
    return sorted(out)


_PLACES = _places()
_MODULES = _module_state()
_HOOKS: State = {}
_CONFIG: list[Any] = []


def check(stage: str) -> None:
    """Emit `tamper` naming what changed since the snapshots (each change once)."""
    changed = _changed(_MODULES, _module_state(), added=False)
    if _CONFIG and _HOOKS:
        changed += _changed(_HOOKS, _hook_state(_CONFIG[0]), added=True)
    fresh = [c for c in changed if c not in _SENT]
    if fresh:
        _SENT.update(fresh)
        emit(k="tamper", stage=stage, changed=fresh[:20])


def _junit_id(nodeid: str) -> str:
    from _pytest.junitxml import mangle_test_address

    return ".".join(mangle_test_address(nodeid))


# ---- pytest hooks ------------------------------------------------------------------------
def _foreign(path: str) -> bool:
    """Code that is neither the environment's (the venv, the standard library) nor pytest's."""
    path = os.path.abspath(path) if path else ""
    return not path or path in WATCH or not path.startswith(_TRUSTED)


_TRUSTED = tuple({os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def pytest_configure(config: Any) -> None:
    _CONFIG.append(config)
    emit(k="start", pid=os.getpid())


@pytest.hookimpl(trylast=True)  # after every plugin has registered and configured itself
def pytest_sessionstart(session: Any) -> None:
    """pytest's own plugins patch pytest while configuring (legacypath does): what changed
    since import by code from the environment becomes the baseline; anything else (a
    conftest imported submitted code early) is tampering."""
    now = _module_state()
    for key in _changed(_MODULES, now, added=False):
        if key in now and not _foreign(now[key][2]):
            _MODULES[key] = now[key]
    _HOOKS.update(_hook_state(session.config))
    foreign = [
        f"{k} from {v[2] or 'no file'}" for k, v in _HOOKS.items() if k.startswith("hook ") and v[2] in WATCH
    ]
    if foreign:
        _SENT.update(foreign)
        emit(k="tamper", stage="sessionstart", changed=foreign[:20])
    check("sessionstart")


def pytest_collection_finish(session: Any) -> None:
    check("collection")


def pytest_runtest_logreport(report: Any) -> None:
    emit(k="report", id=_junit_id(report.nodeid), when=report.when, outcome=report.outcome)
    if report.when == "teardown":
        check(report.nodeid)


def pytest_collectreport(report: Any) -> None:
    if report.outcome != "passed":
        emit(k="report", id=_junit_id(report.nodeid or "collection"), when="collect", outcome=report.outcome)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    check("sessionfinish")
    emit(k="end", exitstatus=int(exitstatus))
