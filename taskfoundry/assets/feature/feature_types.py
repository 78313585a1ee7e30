"""Exact return types of a feature's interface functions, per test (standard library only).

Recorded while the reference passes its F2P tests (validation: this file loaded as the
pytest plugin tf_feature_types, TF_TYPES_RECORD naming the JSON it writes), and observed
again at grading by the guard (assets/feature_guard.py), which reports what it saw; the
host compares. A value's type is spelled from `type()` only (never `isinstance` or
`__class__`, which a submitted class controls): `builtins.str`, a subclass is another
name; containers of the built-in kinds name their elements' types too
(`builtins.list[builtins.str]`), so an object that claims equality hides nowhere.

Returns are seen with sys.monitoring (PY_RETURN on the functions' code objects): however
a test imports or calls the function, its returns are seen; a generator's yields and the
type of what a function raises too (PY_YIELD, PY_UNWIND: observations only, the types stay
the returns').

Each return is also an observation (`evidence`): the function's name and a digest of the
value's type and, for plain data (exact built-in scalars and containers of them), of the
value itself, its containers read without order. The reference's observations per F2P test
(those handed straight to the test file's code, or every one when none is) are recorded at
package time and kept outside the container; a test passes at grading only if its run handed
the test's code exactly those (or showed all of them: taskfoundry/kinds/feature/guard.py,
`unproven`). Forging them takes knowing the hidden tests' values, not reaching the grader.
A value that differs between runs of the reference (a uuid, a time) is required by its type
only (`typed_evidence`): validation records every observation both ways, several times, and
the host settles which (taskfoundry/kinds/feature/evidence.py); the guard is told which
functions' types to report too (`loose`).
Which code a value went to is read from the caller's frame (the guard lets this module's own
frame reads through).
"""

from __future__ import annotations

import hashlib
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
_SCALARS = (str, bytes, int, bool, type(None))
_MAX_PLAIN = 10_000  # elements of a container read for its value; more: its type only


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


def plain(value: Any, depth: int = 0) -> str | None:
    """A text of plain data, the same for equal values (containers without order: an
    implementation may build them differently); None for anything else. Calls no code of
    the value's (exact types only)."""
    kind = type(value)
    if kind is float:
        return f"float:{value:.6g}"  # the tests' approx tolerates the last digits
    if kind in _SCALARS:
        try:
            return f"{kind.__name__}:{value!r}"
        except ValueError:  # an int past the digit limit
            return None
    if kind not in _CONTAINERS or depth >= _MAX_DEPTH:
        return None
    items = list(dict.items(value)) if kind is dict else [(v, None) for v in list(value)]
    if len(items) > _MAX_PLAIN:
        return None
    parts = []
    for key, item in items:
        left = plain(key, depth + 1)
        right = plain(item, depth + 1) if kind is dict else ""
        if left is None or right is None:
            return None
        parts.append(f"{left}:{right}" if kind is dict else left)
    return f"{kind.__name__}[{','.join(sorted(parts))}]"


def evidence(name: str, value: Any) -> str:
    """One observation: `module:function=digest` of the returned value's type and plain value."""
    text = f"{describe(value)}\0{plain(value) or ''}"
    return f"{name}={hashlib.sha256(text.encode(errors='surrogatepass')).hexdigest()[:20]}"


def typed_evidence(name: str, value: Any) -> str:
    """The observation of the value's type only: `module:function~digest` (for a function whose
    values vary between runs of the reference: taskfoundry/kinds/feature/evidence.py)."""
    return f"{name}~{hashlib.sha256(describe(value).encode(errors='surrogatepass')).hexdigest()[:20]}"


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

    def __init__(
        self, tests: frozenset[str] = frozenset(), loose: frozenset[str] = frozenset(), both: bool = False
    ) -> None:
        self.current = ""
        self.loose = loose  # functions whose types are observed too (their values vary)
        self.both = both  # every function's types too (validation: what varies is found later)
        self.seen: dict[str, dict[str, set[str]]] = {}
        self.values: dict[str, set[str]] = {}  # test -> evidence of every return
        self.direct: dict[str, set[str]] = {}  # test -> evidence of values handed to `tests`
        self.tests = tests  # the F2P files, absolute: a value handed to their code is `direct`
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
        mon.register_callback(tool, mon.events.PY_YIELD, self._yielded)
        mon.register_callback(tool, mon.events.PY_UNWIND, self._unwound)
        for code in names:
            mon.set_local_events(tool, code, mon.events.PY_RETURN | mon.events.PY_YIELD)
        mon.set_events(tool, mon.events.PY_UNWIND)  # not a local event: filtered by code below

    def _returned(self, code: types.CodeType, offset: int, value: Any) -> None:
        name = self.names.get(code)
        if name and self.current:
            self.seen.setdefault(self.current, {}).setdefault(name, set()).add(describe(value))
            self._observed(code, name, value)

    def _yielded(self, code: types.CodeType, offset: int, value: Any) -> None:
        """A generator's output is what it yields (its return is None at the end)."""
        name = self.names.get(code)
        if name and self.current:
            self._observed(code, f"{name}>", value)

    def _unwound(self, code: types.CodeType, offset: int, exc: BaseException) -> None:
        """A test of what a function raises has that for its output: the exception's exact
        type (a generator closed early is no output: when that happens is the caller's)."""
        name = self.names.get(code)
        if name and self.current and type(exc) not in (GeneratorExit, StopIteration):
            self._observed(code, f"{name}!", exc)

    def _observed(self, code: types.CodeType, name: str, value: Any) -> None:
        seen = {evidence(name, value)}
        if self.both or name in self.loose:
            seen.add(typed_evidence(name, value))
        self.values.setdefault(self.current, set()).update(seen)
        if self.tests and _caller_file(code) in self.tests:
            self.direct.setdefault(self.current, set()).update(seen)

    def take(self, test: str) -> dict[str, list[str]]:
        return {k: sorted(v) for k, v in self.seen.pop(test, {}).items()}

    def take_values(self, test: str) -> tuple[list[str], list[str]]:
        """(every observation in `test`, those handed to the test files' own code)."""
        return sorted(self.values.pop(test, set())), sorted(self.direct.pop(test, set()))


def _caller_file(code: types.CodeType) -> str:
    """The file of the code the returning (or yielding) function hands its value to, that is
    its caller or whoever resumed it."""
    frame: Any = sys._getframe(1)
    while frame is not None and frame.f_code is not code:  # the returning frame
        frame = frame.f_back
    caller = frame.f_back if frame is not None else None
    return os.path.abspath(caller.f_code.co_filename) if caller is not None else ""


# ---- the recording plugin (validation) -----------------------------------------------------
_RECORD = os.environ.get("TF_TYPES_RECORD", "")
_VALUES = os.environ.get("TF_VALUES_RECORD", "")
_REFUSALS = os.environ.get("TF_REFUSED_RECORD", "")
_WATCH = Watch(
    frozenset(os.path.abspath(p) for p in json.loads(os.environ.get("TF_VALUES_TESTS", "[]"))), both=True
)
_RECORDED: dict[str, dict[str, list[str]]] = {}
_REQUIRED: dict[str, dict[str, list[str]]] = {}  # test -> {"all": [...], "direct": [...]}


ID_BYTES = 512  # a test id longer than this is sent as its digest (a record is cut at 3800 bytes)


def record_id(junit: str) -> str:
    """How the grader's records name a test: its JUnit id, or for a long one (parametrized
    with a long value) its digest, so that the record stays whole and readable. The guard
    (assets/feature_guard.py) names tests so and the host reads them so."""
    data = junit.encode(errors="surrogatepass")
    return junit if len(data) <= ID_BYTES else f"sha256:{hashlib.sha256(data).hexdigest()}"


def junit_id(nodeid: str) -> str:
    from _pytest.junitxml import mangle_test_address

    return ".".join(mangle_test_address(nodeid))


_REFUSED: dict[str, str] = {}  # pytest node id ("" outside tests) -> what the grader refuses
_RUNNING: list[str | None] = [""]  # the node id of the test whose phases run now; None: done


class Refusals:
    """What the grader would refuse in this run if the reference were the submission: the
    guard's own rule (assets/feature_guard.py `refusal`) with the files the reference changes
    as the submitted ones, and any read of the hidden F2P files after collection (the
    grader makes them root's, 0600: a test that reads its own file cannot pass there).
    Validation leaves those tests out of the task and deselects them from its command."""

    def __init__(self, submitted: list[str], hidden: list[str]) -> None:
        import tf_feature_guard as guard  # beside this file in validation's plugin folder

        self.guard = guard
        self.hidden = frozenset(os.path.abspath(p) for p in hidden)
        self.state = guard.State(
            watch=frozenset(),
            files=frozenset(os.path.abspath(p) for p in submitted),
            protected=self.hidden,
            seals=guard._seals(),
            signer=None,  # type: ignore[arg-type]  # nothing is sent
            types=None,
            targets=None,
            interface=(),
            modules=guard.Snapshot({}),
            hooks=guard.Snapshot({}),
            config=(),
            sent=set(),
            own=id(globals()),  # this hook's frames are the grader's
            recorder=id(globals()),
        )

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        test = _RUNNING[0]
        if test is None or test in _REFUSED:
            return
        what = None
        if test and event == "open" and args and isinstance(args[0], str | bytes):
            path = os.path.abspath(os.fsdecode(args[0]))
            if path in self.hidden:
                what = f"opens the hidden test file {path}"
        if what is None and self.guard._refused(event, args, self.state):
            where = self.guard.refusal(event, args, self.state)
            what = f"the grader refuses {event} at {where}" if where else None
        if what is not None:
            _REFUSED[test] = what


def pytest_configure(config: Any) -> None:
    """From here, as the guard is armed before pytest collects: what collection imports counts
    (arrow importing dateutil, which imports ctypes, under arrow.py: `ctypes.dlopen`)."""
    if _REFUSALS:
        submitted = json.loads(os.environ.get("TF_SUBMITTED_FILES", "[]"))
        sys.addaudithook(Refusals(submitted, json.loads(os.environ.get("TF_VALUES_TESTS", "[]"))))


def pytest_collection_finish(session: Any) -> None:
    if _RECORD:
        _WATCH.start(targets(json.loads(os.environ.get("TF_TYPES_TARGETS", "[]"))))


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _WATCH.current = junit_id(nodeid)
    _RUNNING[0] = nodeid


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _RUNNING[0] = ""


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call":
        test = junit_id(report.nodeid)
        seen, (values, direct) = _WATCH.take(test), _WATCH.take_values(test)
        if seen and report.outcome == "passed":
            _RECORDED[test] = seen
        if values and report.outcome == "passed":
            # every observation, and those that reached the test's own code: what a run of the
            # test must show is settled on the host from several runs (kinds/feature/evidence.py)
            _REQUIRED[test] = {"all": values, "direct": direct}


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if _RECORD:
        with open(_RECORD, "w", encoding="utf-8") as out:
            json.dump(_RECORDED, out)
    if _VALUES:
        with open(_VALUES, "w", encoding="utf-8") as out:
            json.dump(_REQUIRED, out)
    if _REFUSALS:
        _RUNNING[0] = None  # writing the record is no refusal
        refused = {
            test: {"junit": junit_id(test) if test else "", "why": why} for test, why in _REFUSED.items()
        }
        with open(_REFUSALS, "w", encoding="utf-8") as out:
            json.dump(refused, out)
