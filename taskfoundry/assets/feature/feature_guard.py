"""The grader's witness inside a feature task's pytest run (standard library and pytest only).

Loaded by the boot (assets/feature_boot.py) as root, before pytest and before any submitted
code, then armed with what the boot read as root: the lines the submission added (WATCH),
the hidden test files (PROTECTED), the interface to watch returns of, and a signer: a
generator that appends an HMAC chain to each record and writes it to the pipe root reads
(its key lives only in the generator's suspended frame, which the audit hook below keeps
submitted code from reaching). Records root cannot verify are forgeries.

- each test phase's outcome, and the exact types the interface returned in it and what it
  returned (observations: the host compares them with the reference's, which never enter
  the container; nothing here decides a pass);
- `tamper`: pytest's, pluggy's and the builtins' functions are snapshotted and compared
  after collection, after every test and at the end;
- `blocked`: an audit hook (it cannot be removed) refuses, whenever submitted code (a
  module the submission changed, or code in no module's namespace) is anywhere on the
  calling stack (standard-library helpers in between do not hide it):
  frame access (sys._getframe, tb_frame, gi_frame, f_code...), gc referrers, trace
  hooks, code objects of the test modules, rewriting a function's code or defaults,
  ctypes and /proc; in threads other than the main one, frame access at all;
- `shadow`: a module of the workspace loaded under a standard or pytest module's name;
- `end` when the session finishes; a run without it ended early (os._exit).

State the hooks read is immutable and held in their default arguments: setting those is
refused from submitted code (an audited event), so it cannot be swapped from outside.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import threading
import types
from collections.abc import Generator
from types import MappingProxyType
from typing import Any, NamedTuple

import pytest

_FRAME_EVENTS = frozenset(
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
    }
)
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_code", "gi_code", "cr_code"})
_SET_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
_GRADER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "py", "iniconfig", "xdist", "pytest_timeout"})
_WATCHED_MODULES = ("pytest", "_pytest", "pluggy", "junitparser")
_CHUNK = 25  # observations a record carries (each under 150 bytes)
Snapshot = MappingProxyType  # name -> (object id, code id, file of the code)


class State(NamedTuple):
    watch: frozenset[tuple[str, int]]  # (file, line) of every submitted line
    files: frozenset[str]  # files that hold submitted lines
    protected: frozenset[str]  # the hidden test files
    seals: frozenset[tuple[int, int, int]]  # (globals id, first line, last line): see _seals
    signer: Generator[None, str | None, None]
    types: Any  # feature_types.Watch, or None
    targets: Any  # feature_types.targets
    interface: tuple[dict[str, str], ...]  # the objects whose returns are watched
    modules: Snapshot  # type: ignore[type-arg]
    hooks: Snapshot  # type: ignore[type-arg]
    config: tuple[Any, ...]
    sent: set[str]  # changes reported once each
    own: int  # id of this module's globals: its frames are the grader's
    recorder: int  # id of the types module's globals: it reads whom a value went to


def signer(key: bytes, fd: int) -> Generator[None, str | None, None]:
    """Sends a record (a JSON line) to root with a chained HMAC; a record sent while submitted
    code is on the stack is replaced by a `blocked` one (no signing on the worker's behalf)."""
    import hmac

    mac = hmac.new(key, digestmod="sha256")
    del key
    write, dumps = os.write, json.dumps
    line = yield None
    while True:
        if line is not None:
            where = _submitted_on_stack(sys._getframe(0))
            if where and where != SEALED and not line.startswith('{"k": "blocked"'):
                line = dumps({"k": "blocked", "event": "signer", "where": where})
            data = line.encode()[:3800]
            mac.update(data + b"\n")
            try:
                write(fd, data + b"\t" + mac.copy().hexdigest().encode() + b"\n")
            except OSError:
                pass
        line = yield None


def emit(_s: State | None = None, **record: Any) -> None:
    if _s is not None:
        _s.signer.send(json.dumps(record))


# ---- the audit hook ------------------------------------------------------------------
SEALED = "sealed"


_MODULE_DICT: Any = vars(types.ModuleType)["__dict__"]  # a module's namespace, past its class


def _module_globals(glob: dict[str, Any]) -> bool:
    """Whether `glob` is the namespace of the module sys.modules holds under its name: code
    exec'd into a dict of its own (no module, no __file__) is not."""
    module = sys.modules.get(glob.get("__name__"))  # type: ignore[arg-type]
    return isinstance(module, types.ModuleType) and _MODULE_DICT.__get__(module) is glob


def _submitted_on_stack(frame: types.FrameType | None, _s: State | None = None) -> str | None:
    """file:line of the nearest submitted code on the stack from `frame` outwards; None when
    there is none; SEALED when a sealed standard-library frame (one that uses a frame and
    hands none back) comes first. Submitted: any code running in a module the submission
    changed, whatever its line numbers say (code compiled into it with lines renumbered is
    the submission's too), and code running in no module's namespace (exec'd into a dict).
    Reads only attributes that raise no audit event."""
    if _s is None:
        return None
    while frame is not None:
        glob = frame.f_globals
        if id(glob) == _s.own:
            pass  # the grader's own frames
        else:
            path, line = glob.get("__file__") or "", frame.f_lineno
            if path in _s.files:
                return f"{path}:{line}"
            if not _module_globals(glob):
                return f"<code outside any module, {str(glob.get('__name__'))[:40]}>:{line}"
            if any(g == id(glob) and a <= line <= b for g, a, b in _s.seals):
                return SEALED
        frame = frame.f_back
    return None


def _refused(event: str, args: tuple[Any, ...], _s: State | None = None) -> bool:
    """Events that hand submitted code a frame, a test's code, or control of the grader."""
    if _s is None:
        return False
    if event in _FRAME_EVENTS or event.startswith("ctypes."):
        return True
    if event == "object.__getattr__" and len(args) > 1:
        if args[1] in _FRAME_ATTRS:
            return True
        if args[1] == "__code__":
            globs = getattr(args[0], "__globals__", None)
            return isinstance(globs, dict) and globs.get("__file__") in _s.protected
        return False
    if event == "object.__setattr__" and len(args) > 1:
        return args[1] in _SET_ATTRS
    if event == "open" and args and isinstance(args[0], str | bytes):
        path = os.fsdecode(args[0])
        return path.startswith("/proc/") or os.path.abspath(path) in _s.protected
    return False


def refusal(event: str, args: tuple[Any, ...], _s: State | None) -> str | None:
    """Where the code is that the grader refuses `event` to (submitted code on the stack, or a
    thread's), or None when it lets it through. Called by the audit hook, whose module is
    `_s.own`. Validation asks the same of the reference's run (assets/feature_types.py), so
    that a test the grader would refuse with the reference is left out of the task."""
    if _s is None or not _refused(event, args, _s):
        return None
    if event == "sys._getframe" and args and id(args[0].f_globals) == _s.own:
        return None  # the grader looking at its own stack (before asking for a frame again)
    frame = sys._getframe(1)  # the audit hook's
    if frame.f_back is not None and id(frame.f_back.f_globals) == _s.recorder:
        return None  # the recorder reading which code a returned value went to (it hands no frame on)
    where = _submitted_on_stack(frame, _s)
    if where == SEALED:
        return None
    main = threading.current_thread() is threading.main_thread()
    if not where and not main and event != "open" and not event.startswith("object.__setattr__"):
        where = f"thread {threading.current_thread().name}"  # stacks started elsewhere
    return where


def audit(event: str, args: tuple[Any, ...], _s: State | None = None) -> None:
    if _s is None or not _refused(event, args, _s):
        return
    where = refusal(event, args, _s)
    if where:
        emit(_s, k="blocked", event=f"{event} {args[1] if len(args) > 1 else ''}".strip(), where=where)
        raise RuntimeError(f"{event} from submitted code is refused by the grader ({where})")


def _seals() -> frozenset[tuple[int, int, int]]:
    """Standard-library functions that look at frames for their own use and return none:
    logging's caller lookup and exception formatting (a log call from submitted code). Not
    `logging.currentframe`, which hands its caller the frame."""
    import logging

    spans = set()
    for func in (logging.Logger.findCaller, logging.Formatter.formatException):
        lines = [n for _, _, n in func.__code__.co_lines() if n is not None]
        spans.add((id(func.__globals__), min(lines), max(lines)))
    return frozenset(spans)


# ---- integrity of the reporting machinery ----------------------------------------------
_FUNCS = (types.FunctionType, classmethod, staticmethod, property)


def _ident(value: Any) -> tuple[int, int, str]:
    inner = value.__func__ if isinstance(value, classmethod | staticmethod) else value
    inner = inner.fget if isinstance(inner, property) else inner
    code = getattr(inner, "__code__", None)
    return (id(value), id(code), code.co_filename) if code is not None else (id(value), 0, "")


def _places() -> dict[str, tuple[Any, str]]:
    places: dict[str, tuple[Any, str]] = {}
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name.split(".")[0] not in _WATCHED_MODULES:
            continue
        places[f"module {name}"] = (sys.modules, name)
        for attr, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType | type) and value.__module__ == name:
                places[f"{name}.{attr}"] = (vars(module), attr)
                for key, member in list(vars(value).items()) if isinstance(value, type) else []:
                    if isinstance(member, _FUNCS):
                        places[f"{name}.{attr}.{key}"] = (vars(value), key)
    places |= {f"builtins.{a}": (vars(builtins), a) for a, v in vars(builtins).items() if callable(v)}
    places |= {f"os.{a}": (vars(os), a) for a in ("write", "_exit")}
    return places


_PLACES = _places()


def _module_state() -> dict[str, tuple[int, int, str]]:
    return {key: _ident(space.get(attr)) for key, (space, attr) in _PLACES.items()}


def _hook_state(config: Any) -> dict[str, tuple[int, int, str]]:
    state = {}
    for name, caller in list(vars(config.pluginmanager.hook).items()):
        impls = getattr(caller, "get_hookimpls", None)
        for impl in impls() if impls is not None else []:
            state[f"hook {name} {impl.plugin_name}"] = _ident(impl.function)
        state[f"hookexec {name}"] = (id(getattr(caller, "_hookexec", None)), 0, "")
    return state


def _changed(before: Any, now: dict[str, tuple[int, int, str]], added: bool) -> list[str]:
    out = [key for key, ident in before.items() if now.get(key) != ident]
    return sorted(out + ([f"{k} (added)" for k in now.keys() - before.keys()] if added else []))


def _shadows(_s: State) -> list[str]:
    """Modules named like the standard library's or the grader's, loaded from elsewhere."""
    names = _GRADER_MODULES | set(sys.stdlib_module_names)
    out = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name.split(".")[0] in names and isinstance(path, str) and path.startswith(_WS):
            out.append(f"module {name} from {path}")
    return out


def check(stage: str, _s: State | None = None) -> None:
    if _s is None:
        return
    changed = _changed(_s.modules, _module_state(), added=False)
    if _s.config and _s.hooks:
        changed += _changed(_s.hooks, _hook_state(_s.config[0]), added=True)
    changed += _shadows(_s)
    fresh = [c for c in changed if c not in _s.sent]
    if fresh:
        _s.sent.update(fresh)
        emit(_s, k="tamper", stage=stage, changed=fresh[:20])


_WS = "/workspace/"
_STATEFUL = ("emit", "_submitted_on_stack", "_refused", "audit", "check", "_rearm", "_guard_modules")


def _rearm(state: State, _s: State | None = None) -> None:
    """Hand every stateful function `state` (as its default: replaced only from here)."""
    space = globals()
    for name in _STATEFUL:
        space[name].__defaults__ = (state,)
    for name in _HOOKS:
        space[name].__defaults__ = (state,)


def arm(key: bytes, fd: int, config: dict[str, Any], types_module: Any) -> None:
    """Called once by the boot, as root, before pytest starts."""
    watch = frozenset((path, int(n)) for path, lines in config.get("watch", {}).items() for n in lines)
    state = State(
        watch=watch,
        files=frozenset(p for p, _ in watch),
        protected=frozenset(config.get("protected", [])),
        seals=_seals(),
        signer=signer(key, fd),
        types=types_module.Watch(frozenset(config.get("protected", [])), frozenset(config.get("loose", []))),
        targets=types_module.targets,
        interface=tuple(config.get("interface", [])),
        modules=MappingProxyType(_module_state()),
        hooks=MappingProxyType({}),
        config=(),
        sent=set(),
        own=id(globals()),
        recorder=id(vars(types_module)),
    )
    next(state.signer)
    _rearm(state)
    sys.addaudithook(audit)


# ---- pytest hooks ------------------------------------------------------------------------
def _junit_id(nodeid: str) -> str:
    """The test's name in the records: feature_types.record_id of its JUnit id (a long id as
    its digest: a record is cut at 3800 bytes, and a cut record is unreadable)."""
    import hashlib

    from _pytest.junitxml import mangle_test_address

    junit = ".".join(mangle_test_address(nodeid))
    data = junit.encode(errors="surrogatepass")
    return junit if len(data) <= 512 else f"sha256:{hashlib.sha256(data).hexdigest()}"


_TRUSTED = tuple({os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def pytest_configure(config: Any, _s: State | None = None) -> None:
    assert _s is not None
    _rearm(_s._replace(config=(config,)))
    emit(k="start", pid=os.getpid())


@pytest.hookimpl(trylast=True)  # after every plugin has registered and configured itself
def pytest_sessionstart(session: Any, _s: State | None = None) -> None:
    """pytest's own plugins patch pytest while configuring: what code from the environment
    changed becomes the baseline; anything else is tampering."""
    assert _s is not None
    now, modules = _module_state(), dict(_s.modules)
    for key in _changed(modules, now, added=False):
        if key in now and now[key][2].startswith(_TRUSTED) and now[key][2] not in _s.files:
            modules[key] = now[key]
    hooks = _hook_state(session.config)
    _rearm(_s._replace(modules=MappingProxyType(modules), hooks=MappingProxyType(hooks)))
    foreign = [f"{k} from {v[2]}" for k, v in hooks.items() if k.startswith("hook ") and v[2] in _s.files]
    if foreign:
        emit(k="tamper", stage="sessionstart", changed=foreign[:20])
    check("sessionstart")


def pytest_collection_finish(session: Any, _s: State | None = None) -> None:
    assert _s is not None
    check("collection")
    _guard_modules()
    if _s.interface:
        _s.types.start(_s.targets(list(_s.interface)))


def pytest_runtest_logstart(nodeid: str, location: Any, _s: State | None = None) -> None:
    if _s is not None:
        _s.types.current = _junit_id(nodeid)


def pytest_runtest_logreport(report: Any, _s: State | None = None) -> None:
    assert _s is not None
    test = _junit_id(report.nodeid)
    seen = _s.types.take(test) if report.when == "call" else {}
    values, direct = _s.types.take_values(test) if report.when == "call" else ([], [])
    for kind, seen_values in (("values", values), ("direct", direct)):
        for at in range(0, len(seen_values), _CHUNK):  # a record is cut at 3800 bytes: in pieces
            emit(k=kind, id=test, values=seen_values[at : at + _CHUNK])
    emit(k="report", id=test, when=report.when, outcome=report.outcome, types=seen)
    if report.when == "teardown":
        check(report.nodeid)


def pytest_collectreport(report: Any) -> None:
    if report.outcome != "passed":
        emit(k="report", id=_junit_id(report.nodeid or "collection"), when="collect", outcome=report.outcome)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    check("sessionfinish")
    emit(k="end", exitstatus=int(exitstatus))


_HOOKS = (
    "pytest_configure",
    "pytest_sessionstart",
    "pytest_collection_finish",
    "pytest_runtest_logstart",
    "pytest_runtest_logreport",
)


# ---- the hidden test modules, closed to submitted code --------------------------------------
class _Sealed(types.ModuleType):
    """A test module whose attributes submitted code cannot read (its parametrize marks and
    constants hold expected values); pytest and the tests themselves read them as before."""

    def __getattribute__(self, name: str) -> Any:
        where = _submitted_on_stack(sys._getframe(0))  # its own frame: no audit refusal
        if where and where != SEALED:
            emit(k="blocked", event=f"test module attribute {name}", where=where)
            raise AttributeError(f"reading a test module from submitted code is refused ({where})")
        return super().__getattribute__(name)


def _guard_modules(_s: State | None = None) -> None:
    assert _s is not None
    for module in list(sys.modules.values()):
        if isinstance(module, types.ModuleType) and getattr(module, "__file__", None) in _s.protected:
            # collection has read the marks (parametrize rows hold expected values): the items
            # keep their own copies, the functions and classes need them no more
            for value in list(vars(module).values()):
                if isinstance(value, types.FunctionType | type) and "pytestmark" in vars(value):
                    delattr(value, "pytestmark")
            module.__class__ = _Sealed
