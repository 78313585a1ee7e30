"""Data-flow inside one test function: which definitions reach a name, and its origins."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import libcst as cst

from taskfoundry.linters import origins as o
from taskfoundry.linters.cstutil import as_bytes, call_name, code, last_part, literal_value, subexpressions
from taskfoundry.linters.files import FileOps
from taskfoundry.linters.flowtypes import FlowSettings, Tags, Write
from taskfoundry.linters.positions import cst_statements
from taskfoundry.linters.tags import compute_origins

HASH_NAMES = frozenset({"zlib.crc32", "zlib.adler32", "binascii.crc32", "crc32", "adler32", "hash"})
MUTATORS = frozenset({"update", "append", "extend", "add", "insert"})


@dataclass(frozen=True)
class Def:
    """One binding of a name: to a value, or (element=True) to an element of a value."""

    value: cst.BaseExpression
    element: bool = False


def _bind(
    defs: dict[str, list[Def]], target: cst.BaseExpression, value: cst.BaseExpression, element: bool
) -> None:
    if isinstance(target, cst.Name):
        defs.setdefault(target.value, []).append(Def(value, element))
    elif isinstance(target, cst.Tuple | cst.List):
        values: list[cst.BaseExpression] | None = None
        if isinstance(value, cst.Tuple | cst.List) and len(value.elements) == len(target.elements):
            values = [e.value for e in value.elements]
        for i, item in enumerate(target.elements):
            if values is not None and not element:
                _bind(defs, item.value, values[i], False)
            else:
                _bind(defs, item.value, value, True)
    elif isinstance(target, cst.StarredElement):
        _bind(defs, target.value, value, True)


def statement_subs(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node a statement evaluates itself (its header, not its nested blocks)."""
    return [sub for node in header_nodes(stmt) for sub in subexpressions(node)]


def collect_defs(
    nodes: Iterable[cst.CSTNode],
    subs: Callable[[cst.CSTNode], list[cst.CSTNode]] = statement_subs,
) -> dict[str, list[Def]]:
    """Bindings made by assignments, loops, with-items, walrus and comprehensions."""
    defs: dict[str, list[Def]] = {}
    for stmt in nodes:
        if isinstance(stmt, cst.Assign):
            for target in stmt.targets:
                _bind(defs, target.target, stmt.value, False)
        elif isinstance(stmt, cst.AnnAssign | cst.AugAssign) and stmt.value is not None:
            _bind(defs, stmt.target, stmt.value, False)
        elif isinstance(stmt, cst.For):
            _bind(defs, stmt.target, stmt.iter, True)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    _bind(defs, item.asname.name, item.item, False)
        for sub in subs(stmt):
            if isinstance(sub, cst.NamedExpr):
                _bind(defs, sub.target, sub.value, False)
            elif isinstance(sub, cst.CompFor):
                _bind(defs, sub.target, sub.iter, True)
            elif isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute):
                if sub.func.attr.value in MUTATORS and sub.args:
                    _bind(defs, sub.func.value, sub.args[-1].value, True)
    return defs


def header_nodes(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The expressions a statement evaluates itself (not those of its nested blocks)."""
    if isinstance(stmt, cst.If | cst.While):
        return [stmt.test]
    if isinstance(stmt, cst.For):
        return [stmt.iter]
    if isinstance(stmt, cst.With):
        return [item.item for item in stmt.items]
    if isinstance(stmt, cst.Match):
        return [stmt.subject]
    if isinstance(stmt, cst.BaseCompoundStatement):
        return []
    return [stmt]


def statement_nodes(func: cst.FunctionDef) -> list[cst.CSTNode]:
    """Every small and compound statement of a function body, in source order."""
    return list(cst_statements(func.body.body))


@dataclass
class Flow:
    """Definitions and origins of values within one test function."""

    func: cst.FunctionDef
    module_defs: Mapping[str, list[Def]]
    settings: FlowSettings
    lines: Mapping[int, int]
    subs_of: Callable[[cst.CSTNode], list[cst.CSTNode]] = statement_subs
    statements: list[cst.CSTNode] = field(init=False)
    defs: dict[str, list[Def]] = field(init=False)
    files: FileOps = field(init=False)
    run_calls: list[tuple[cst.Call, int]] = field(init=False, default_factory=list)
    run_input_names: set[str] = field(init=False, default_factory=set)
    run_input_literals: set[bytes] = field(init=False, default_factory=set)
    _cache: dict[int, Tags] = field(init=False, default_factory=dict)
    _resolving: set[str] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.statements = statement_nodes(self.func)
        self.defs = collect_defs(self.statements, self.subs_of)
        self.files = FileOps(self)
        for stmt in self.statements:
            line = self.lines.get(id(stmt), 0)
            for sub in self.subs_of(stmt):
                if isinstance(sub, cst.Call):
                    self._note_call(sub, line)

    def _note_call(self, call: cst.Call, line: int) -> None:
        if self.is_run_call(call):
            self.run_calls.append((call, line))
            for arg in call.args:
                self._note_run_input(arg.value)
            return
        self.files.note_call(call, line)

    def _note_run_input(self, node: cst.BaseExpression) -> None:
        for sub in subexpressions(node):
            if isinstance(sub, cst.Name):
                self.run_input_names.add(sub.value)
            elif isinstance(sub, cst.BaseExpression):
                value = literal_value(sub)
                if value is not None:
                    self.run_input_literals.add(as_bytes(value))
        if isinstance(node, cst.Dict):
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    key = literal_value(element.key)
                    if isinstance(key, str):
                        self.files.input_files.add(key)

    def is_run_call(self, call: cst.Call) -> bool:
        """Whether a call runs the program under test."""
        name = call_name(call)
        return (name is not None and name in self.settings.run_names) or (
            last_part(call) in self.settings.run_lasts
        )

    def definitions(self, name: str) -> list[Def]:
        """Bindings of `name` in the test, else at module level."""
        return self.defs.get(name) or list(self.module_defs.get(name, []))

    def single_value(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """Follow a Name bound exactly once (not as a loop element) to its value."""
        seen: set[str] = set()
        while isinstance(node, cst.Name) and node.value not in seen:
            seen.add(node.value)
            found = self.definitions(node.value)
            if len(found) != 1 or found[0].element:
                break
            node = found[0].value
        return node

    def path_key(self, node: cst.BaseExpression) -> str:
        """A normalised text identifying the file a path expression names."""
        return self.files.path_key(node)

    def origins(self, node: cst.BaseExpression) -> Tags:
        """Origin tags of an expression (see `origins.py`)."""
        cached = self._cache.get(id(node))
        if cached is None:
            cached = compute_origins(self, node)
            self._cache[id(node)] = cached
        return cached

    def name_origins(self, name: str) -> Tags:
        """Origins of a name: the union over its bindings; UNKNOWN when unbound or cyclic."""
        if name in self._resolving:
            return frozenset({o.UNKNOWN})
        found = self.definitions(name)
        if not found:
            return frozenset({o.UNKNOWN})
        self._resolving.add(name)
        try:
            tags: set[str] = set()
            for binding in found:
                tags |= self.origins(binding.value)
        finally:
            self._resolving.discard(name)
        if name in self.run_input_names:
            tags.add(o.INPUT)
        return frozenset(tags)

    def runs_after(self, writes: list[Write]) -> bool:
        """Whether the program runs after any of these writes (and could have changed them)."""
        return any(line > write.line for _, line in self.run_calls for write in writes)

    def code(self, node: cst.CSTNode) -> str:
        """Normalised source of a node."""
        return code(node)
