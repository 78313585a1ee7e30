"""Extraction: the feature's code removed from the repository with libcst.

From the tested objects, breadth-first over the callees the F2P tests reached: code the
P2P tests also reach stays; the rest goes. A public function or method keeps its
signature, decorators and docstring (the interface) with a body that raises
NotImplementedError; a private helper (`_name`) is deleted, unless code run at import names
it (then it is stubbed too). The removed lines are capped: past the cap, callees stay.
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import PositionProvider

from taskfoundry.kinds.feature.objects import ObjectRef
from taskfoundry.kinds.feature.results import InterfaceObject

STUB = 'raise NotImplementedError("removed: implement this")'


@dataclass(frozen=True)
class FileTrace:
    calls: frozenset[str]  # `path::qualname` of project functions called
    edges: frozenset[tuple[str, str]]


@dataclass
class Extraction:
    stripped: dict[str, str] = field(default_factory=dict)
    interface: list[InterfaceObject] = field(default_factory=list)
    removed_lines: int = 0
    capped: bool = False
    skipped: list[str] = field(default_factory=list)  # tested objects P2P also reaches


@dataclass(frozen=True)
class _Def:
    file: str
    qualname: str
    node: cst.FunctionDef | cst.ClassDef
    lines: int


def _is_private(qualname: str) -> bool:
    name = qualname.rsplit(".", 1)[-1]
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class _Index(cst.CSTVisitor):
    """Every function and class reachable by a dotted qualname (no nested functions)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, file: str) -> None:
        self.file = file
        self.stack: list[str] = []
        self.defs: dict[str, _Def] = {}
        self.in_function = 0
        self.at_import: set[str] = set()  # names module and class bodies and decorators use

    def visit_Name(self, node: cst.Name) -> None:
        if not self.in_function:
            self.at_import.add(node.value)

    def _add(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        pos = self.get_metadata(PositionProvider, node)
        qual = ".".join([*self.stack, node.name.value])
        self.defs.setdefault(qual, _Def(self.file, qual, node, pos.end.line - pos.start.line + 1))

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        if self.in_function:
            return False
        self._add(node)
        self.stack.append(node.name.value)
        return True

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if not self.in_function:
            self._add(node)
            for decorator in node.decorators:  # run at import, unlike the body
                decorator.visit(self)
        self.in_function += 1
        return False

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.in_function -= 1


class _Strip(cst.CSTTransformer):
    def __init__(self, stub: set[str], delete: set[str]) -> None:
        self.stub, self.delete = stub, delete
        self.stack: list[str] = []
        self.depth = 0

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.stack.append(node.name.value)
        return True

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef | cst.RemovalSentinel:
        self.stack.pop()
        body = updated_node.body
        if isinstance(body, cst.IndentedBlock) and not body.body:
            return updated_node.with_changes(body=body.with_changes(body=[cst.parse_statement("pass")]))
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.stack.append(node.name.value)
        self.depth += 1
        return False

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef | cst.RemovalSentinel:
        qual = ".".join(self.stack)
        self.stack.pop()
        self.depth -= 1
        if self.depth:
            return updated_node
        if qual in self.delete:
            return cst.RemovalSentinel.REMOVE
        if qual in self.stub:
            return stubbed(updated_node)
        return updated_node


def stubbed(node: cst.FunctionDef) -> cst.FunctionDef:
    """The function with its signature, decorators and docstring, and a body that raises."""
    body: list[cst.BaseStatement] = []
    doc = node.get_docstring(clean=False)
    if doc is not None and isinstance(node.body, cst.IndentedBlock):
        body.append(node.body.body[0])
    body.append(cst.parse_statement(STUB))
    block = node.body if isinstance(node.body, cst.IndentedBlock) else cst.IndentedBlock(body=[])
    return node.with_changes(body=block.with_changes(body=body))


def signature(module: cst.Module, node: cst.FunctionDef | cst.ClassDef) -> str:
    head = node.with_changes(body=cst.IndentedBlock(body=[cst.parse_statement("...")]), leading_lines=[])
    return module.code_for_node(head).rstrip().removesuffix("...").rstrip()


def removed_lines(before: str, after: str) -> int:
    """Non-blank lines of `before` that `after` no longer has."""
    diff = difflib.ndiff(before.splitlines(), after.splitlines())
    return sum(1 for line in diff if line.startswith("- ") and line[2:].strip())


def module_of(file: str) -> str:
    parts = file.removesuffix(".py").split("/")
    if parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def extract(
    repo: Path, tops: Sequence[ObjectRef], f2p: FileTrace, p2p_calls: Iterable[str], cap: int
) -> Extraction:
    """Strip `tops` and their callees reached only by the F2P tests."""
    p2p = frozenset(p2p_calls)
    result = Extraction()
    modules: dict[str, cst.Module] = {}
    wrappers: dict[str, cst.MetadataWrapper] = {}
    index: dict[str, dict[str, _Def]] = {}
    at_import: dict[str, set[str]] = {}

    def defs(file: str) -> dict[str, _Def]:
        if file not in index:
            path = repo / file
            try:
                module = cst.parse_module(path.read_text())
            except (OSError, cst.ParserSyntaxError, UnicodeDecodeError):
                index[file] = {}
                return index[file]
            wrapper = cst.MetadataWrapper(module)
            visitor = _Index(file)
            wrapper.visit(visitor)
            modules[file], wrappers[file], index[file] = wrapper.module, wrapper, visitor.defs
            at_import[file] = visitor.at_import
        return index[file]

    stub: dict[str, set[str]] = {}
    delete: dict[str, set[str]] = {}
    budget = [0]

    def take(file: str, qual: str, top: bool) -> bool:
        d = defs(file).get(qual)
        if d is None or not isinstance(d.node, cst.FunctionDef) or f"{file}::{qual}" in p2p:
            return False
        if qual in stub.get(file, set()) | delete.get(file, set()):
            return False
        if budget[0] + d.lines > cap:
            result.capped = True
            return False
        budget[0] += d.lines
        # a helper module-level code names (a table of functions, a decorator) is stubbed:
        # deleted, importing the module fails with a NameError in every test
        if _is_private(qual) and not top and qual.rsplit(".", 1)[-1] not in at_import.get(file, set()):
            delete.setdefault(file, set()).add(qual)
        else:
            stub.setdefault(file, set()).add(qual)
            _interface(result, modules[file], d, "method" if "." in qual else "function", top)
        return True

    queue: deque[str] = deque()
    for ref in tops:
        found = defs(ref.file).get(ref.name)
        if found is None:
            continue
        if isinstance(found.node, cst.FunctionDef):
            if take(ref.file, ref.name, True):
                queue.append(f"{ref.file}::{ref.name}")
            else:
                result.skipped.append(ref.key)
            continue
        methods = [q for q in defs(ref.file) if q.startswith(f"{ref.name}.") and q.count(".") == 1]
        reached = [m for m in methods if f"{ref.file}::{m}" in f2p.calls]
        at = len(result.interface)  # the class goes before its methods
        taken = [m for m in reached if take(ref.file, m, not _is_private(m))]
        if taken:
            _interface(result, modules[ref.file], found, "class", True, at)
            queue.extend(f"{ref.file}::{m}" for m in taken)
        else:
            result.skipped.append(ref.key)
    callees: dict[str, list[str]] = {}
    for caller, callee in f2p.edges:
        callees.setdefault(caller, []).append(callee)
    while queue:
        for callee in sorted(callees.get(queue.popleft(), [])):
            file, _, qual = callee.partition("::")
            if take(file, qual, False):
                queue.append(callee)
    for file in sorted(set(stub) | set(delete)):
        before = modules[file].code
        after = modules[file].visit(_Strip(stub.get(file, set()), delete.get(file, set()))).code
        result.stripped[file] = after
        result.removed_lines += removed_lines(before, after)
    return result


def _interface(
    result: Extraction, module: cst.Module, d: _Def, kind: str, top: bool, at: int | None = None
) -> None:
    doc = d.node.get_docstring() or ""
    result.interface.insert(
        len(result.interface) if at is None else at,
        InterfaceObject(
            name=d.qualname,
            module=module_of(d.file),
            file=d.file,
            kind=kind,
            signature=signature(module, d.node),
            docstring=doc,
            top=top,
        ),
    )
