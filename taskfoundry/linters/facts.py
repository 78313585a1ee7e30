"""The facts rules and triage read: test functions, their assertions and their data-flow."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst

from taskfoundry.linters.config import LintConfig
from taskfoundry.linters.cstutil import call_name, constant_truth
from taskfoundry.linters.dataflow import Def, Flow, collect_defs, statement_subs
from taskfoundry.linters.flowtypes import DEFAULT_RUN_LASTS, DEFAULT_RUN_NAMES, FlowSettings
from taskfoundry.linters.helpers import FAIL_CALLS, Helpers, find_helpers, looks_like_check
from taskfoundry.linters.kinds import FAIL, Kind, classify
from taskfoundry.linters.positions import cst_statements
from taskfoundry.linters.unittest_asserts import as_assert_expr

OPAQUE_CALLS = frozenset({"pytest.raises", "raises", "pytest.warns"})
StmtT = TypeVar("StmtT", bound=cst.BaseCompoundStatement)


@dataclass(frozen=True)
class Assertion:
    """One checked condition: an `assert` statement or a unittest `self.assert*` call."""

    expr: cst.BaseExpression
    line: int
    stmt: cst.CSTNode


@dataclass
class ModuleInfo:
    """What the rules need to know about the module around the tests."""

    config: LintConfig
    lines: Mapping[int, int]
    defs: dict[str, list[Def]]
    helpers: Helpers
    settings: FlowSettings
    subs: dict[int, list[cst.CSTNode]] = field(default_factory=dict)

    def subs_of(self, stmt: cst.CSTNode) -> list[cst.CSTNode]:
        """`statement_subs(stmt)`, computed once per statement of the module."""
        found = self.subs.get(id(stmt))
        if found is None:
            found = self.subs[id(stmt)] = statement_subs(stmt)
        return found


@dataclass
class Case:
    """One pytest test function, with everything rules and triage read from it."""

    name: str
    func: cst.FunctionDef
    module: ModuleInfo
    flow: Flow = field(init=False)
    assertions: list[Assertion] = field(init=False, default_factory=list)
    opaque: list[int] = field(init=False, default_factory=list)
    check_ids: set[int] = field(init=False, default_factory=set)
    fail_ids: set[int] = field(init=False, default_factory=set)
    calls: list[tuple[cst.Call, int]] = field(init=False, default_factory=list)
    _kinds: dict[int, Kind] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.flow = Flow(
            self.func, self.module.defs, self.module.settings, self.module.lines, self.module.subs_of
        )
        for stmt in self.flow.statements:
            self._scan(stmt)

    @property
    def config(self) -> LintConfig:
        return self.module.config

    @property
    def suite(self) -> str:
        """output: the test runs a program (a run call the data flow knows); unit: it calls code."""
        if self.config.suite != "auto":
            return self.config.suite
        return "output" if self.flow.run_calls else "unit"

    @property
    def line(self) -> int:
        """Line of the `def`."""
        return self.module.lines.get(id(self.func), 1)

    def line_of(self, stmt: cst.CSTNode) -> int:
        """Line of a statement of this test (the def line if unknown)."""
        return self.module.lines.get(id(stmt), self.line)

    def _scan(self, stmt: cst.CSTNode) -> None:
        line = self.line_of(stmt)
        expr: cst.BaseExpression | None = None
        if isinstance(stmt, cst.Assert):
            expr = stmt.test
        elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
            expr = as_assert_expr(stmt.value)
        if expr is not None:
            self.assertions.append(Assertion(expr, line, stmt))
            fails = constant_truth(expr) is False
            (self.fail_ids if fails else self.check_ids).add(id(stmt))
        if isinstance(stmt, cst.Raise):
            self.fail_ids.add(id(stmt))
        for sub in self.flow.subs_of(stmt):
            if isinstance(sub, cst.Call):
                self.calls.append((sub, line))
                self._note_opaque(sub, stmt, line)

    def _note_opaque(self, call: cst.Call, stmt: cst.CSTNode, line: int) -> None:
        if not self._is_opaque_check(call):
            return
        self.opaque.append(line)
        is_fail = call_name(call) in FAIL_CALLS
        (self.fail_ids if is_fail else self.check_ids).add(id(stmt))

    def _is_opaque_check(self, call: cst.Call) -> bool:
        """A check the linter cannot see into: pytest.raises/fail, or an asserting helper."""
        name = call_name(call) or ""
        return name in OPAQUE_CALLS or looks_like_check(call) or self.module.helpers.covers(call)

    def checks_in(self, nodes: Sequence[cst.CSTNode]) -> bool:
        """Whether the statements (and nested blocks) hold an assertion that can pass."""
        return any(id(stmt) in self.check_ids for stmt in cst_statements(nodes))

    def fails_in(self, nodes: Sequence[cst.CSTNode]) -> bool:
        """Whether the statements hold an explicit failure (raise, pytest.fail, assert False)."""
        return any(id(stmt) in self.fail_ids for stmt in cst_statements(nodes))

    def kind(self, assertion: Assertion) -> Kind:
        """Strength class of an assertion (cached)."""
        found = self._kinds.get(id(assertion))
        if found is None:
            found = classify(self.flow, assertion.expr, self.config.short_substring_min)
            self._kinds[id(assertion)] = found
        return found

    def kinds(self) -> list[tuple[Assertion, Kind]]:
        """Every assertion that can pass, with its strength class."""
        pairs = [(a, self.kind(a)) for a in self.assertions]
        return [(a, k) for a, k in pairs if k.kind != FAIL]

    def asserts_in(self, nodes: Sequence[cst.CSTNode]) -> list[Assertion]:
        """The assertions inside the statements (and their nested blocks)."""
        ids = {id(stmt) for stmt in cst_statements(nodes)}
        return [a for a in self.assertions if id(a.stmt) in ids]

    def compound(self, kind: type[StmtT]) -> Iterator[StmtT]:
        """Compound statements of a type in the test body, nested blocks included."""
        for stmt in cst_statements(self.func.body.body):
            if isinstance(stmt, kind):
                yield stmt

    def docstring(self) -> str | None:
        """The test's docstring, cleaned."""
        return self.func.get_docstring(clean=True)


def module_info(module: cst.Module, lines: Mapping[int, int], config: LintConfig) -> ModuleInfo:
    """Module-level bindings, asserting helpers and flow settings for one module."""
    top = [
        small
        for stmt in module.body
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt])
    ]
    named = [n for n in config.run_functions if "." in n]
    bare = [n for n in config.run_functions if "." not in n]
    settings = FlowSettings(
        run_names=DEFAULT_RUN_NAMES | frozenset(named),
        run_lasts=DEFAULT_RUN_LASTS | frozenset(bare),
        roundtrip=config.all_roundtrip_modules(),
        golden_min=config.golden_literal_min,
    )
    subs: dict[int, list[cst.CSTNode]] = {}

    def subs_of(stmt: cst.CSTNode) -> list[cst.CSTNode]:
        found = subs.get(id(stmt))
        if found is None:
            found = subs[id(stmt)] = statement_subs(stmt)
        return found

    helpers = find_helpers(module, subs_of)
    return ModuleInfo(config, lines, collect_defs(top), helpers, settings, subs)


def collect_cases(module: cst.Module, info: ModuleInfo) -> Iterator[Case]:
    """Every pytest-collected test: `test*` functions, and `test*` methods of `Test*` classes."""
    yield from _cases_in(module.body, info, prefix="")


def _cases_in(body: Sequence[cst.CSTNode], info: ModuleInfo, prefix: str) -> Iterator[Case]:
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value.startswith("test"):
            yield Case(prefix + stmt.name.value, stmt, info)
        elif isinstance(stmt, cst.ClassDef) and stmt.name.value.startswith("Test"):
            yield from _cases_in(stmt.body.body, info, f"{prefix}{stmt.name.value}::")
