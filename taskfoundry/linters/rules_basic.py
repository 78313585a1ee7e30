"""Rules on a test's overall shape: empty tests, constant or exit-status-only assertions."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from taskfoundry.linters import origins as o
from taskfoundry.linters.cstutil import (
    bool_parts,
    call_name,
    code,
    comparison,
    constant_truth,
    int_value,
    show,
)
from taskfoundry.linters.facts import Case
from taskfoundry.linters.kinds import RETURNCODE, is_alternatives, is_returncode, is_size

Hit = tuple[int, str]


def _is_placeholder(stmt: cst.CSTNode) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(_is_placeholder(small) for small in stmt.body)
    if isinstance(stmt, cst.Pass):
        return True
    if isinstance(stmt, cst.Return):
        return stmt.value is None
    return isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Ellipsis)


def is_empty_body(case: Case) -> bool:
    """Body is only a docstring, `pass`, `...` or a bare `return`."""
    body = list(case.func.body.body)
    if case.docstring() is not None and body:
        body = body[1:]
    return all(_is_placeholder(stmt) for stmt in body)


def check_pass_body(case: Case) -> Iterator[Hit]:
    if is_empty_body(case):
        yield (
            case.line,
            (
                "the test body is empty (pass/.../docstring only): run the program and assert its "
                "exact output, or delete the test"
            ),
        )


def check_no_assertions(case: Case) -> Iterator[Hit]:
    if not case.assertions and not case.opaque and not is_empty_body(case):
        yield (
            case.line,
            (
                "the test asserts nothing, so it passes for any program: assert the exact stdout, "
                "stderr, exit status or written files the reference produces"
            ),
        )


def _computes(expr: cst.BaseExpression) -> bool:
    """Whether evaluating `expr` calls, reads an attribute or indexes (each may give a new value)."""
    return bool(m.findall(expr, m.Call() | m.Attribute() | m.Subscript()))


def _always_true(case: Case, expr: cst.BaseExpression) -> str | None:
    if constant_truth(expr) is True:
        return "is a constant"
    if isinstance(expr, cst.BooleanOperation):
        if isinstance(expr.operator, cst.Or) and any(
            constant_truth(p) is True for p in bool_parts(expr, cst.Or)
        ):
            return "is `or`-ed with a true constant"
        return None
    parts = comparison(expr)
    if parts is not None:
        left, op, right = parts
        same_op = op in ("Equal", "Is", "LessThanEqual", "GreaterThanEqual")
        if same_op and type(left) is type(right) and code(left) == code(right):
            # in a unit test `x == x` runs the code's __eq__ (a test of it), and two calls or reads
            # alike are two objects: only `x is x` cannot fail there
            if case.suite == "output" or (op == "Is" and not _computes(left)):
                return "compares a value with itself"
        if op in ("GreaterThanEqual",) and is_size(left) and int_value(right) == 0:
            return "holds for every size (>= 0)"
        if op == "LessThanEqual" and is_size(right) and int_value(left) == 0:
            return "holds for every size (0 <=)"
        if op == "IsNot" and code(right) == "None":
            value = case.flow.single_value(left)
            if isinstance(value, cst.Call) and case.flow.is_run_call(value):
                return "holds for every run (run() always returns a result)"
    if isinstance(expr, cst.Call) and call_name(expr) == "isinstance" and len(expr.args) == 2:
        subject, kind = expr.args[0].value, code(expr.args[1].value)
        if isinstance(subject, cst.Attribute) and subject.attr.value in o.PROGRAM_ATTRS:
            if subject.attr.value in o.RETURNCODE_ATTRS and kind == "int":
                return "holds for every exit status"
            if subject.attr.value not in o.RETURNCODE_ATTRS and kind in ("str", "bytes"):
                return "holds for every output of run()"
    return None


def check_trivially_true(case: Case) -> Iterator[Hit]:
    for assertion in case.assertions:
        why = _always_true(case, assertion.expr)
        if why is not None:
            yield (
                assertion.line,
                (
                    f"`assert {show(assertion.expr)}` can never fail ({why}): "
                    "compare the program's output with the value the reference produces"
                ),
            )


def check_sole_returncode(case: Case) -> Iterator[Hit]:
    pairs = case.kinds()
    if pairs and not case.opaque and all(k.kind == RETURNCODE for _, k in pairs):
        yield (
            pairs[0][0].line,
            (
                "the test only checks the exit status, which a stub returning the same code "
                "passes: also assert the exact stdout/stderr (or written files) for this input"
            ),
        )


def _returncode_choices(case: Case, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    for part in bool_parts(expr, cst.And):
        parts = comparison(part)
        if parts is None or parts[1] != "In" or not is_returncode(case.flow, parts[0]):
            continue
        choices = parts[2]
        is_range = isinstance(choices, cst.Call) and call_name(choices) == "range"
        if is_range or is_alternatives(case.flow, choices):
            return choices
    return None


def check_returncode_in_list(case: Case) -> Iterator[Hit]:
    for assertion in case.assertions:
        choices = _returncode_choices(case, assertion.expr)
        if choices is not None:
            yield (
                assertion.line,
                (
                    f"the exit status may be any of `{show(choices)}`: assert the one status the "
                    "reference returns for this input (`== 0`, `== 2`, ...)"
                ),
            )


def check_assertion_disjunction(case: Case) -> Iterator[Hit]:
    for assertion in case.assertions:
        expr = assertion.expr
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            if constant_truth(expr) is None:
                yield (
                    assertion.line,
                    (
                        f"`assert {show(expr)}` passes when either side holds: assert the one "
                        "outcome the reference produces"
                    ),
                )
            continue
        for part in bool_parts(expr, cst.And):
            parts = comparison(part)
            if (
                parts is not None
                and parts[1] == "In"
                and is_alternatives(case.flow, parts[2])
                and not is_returncode(case.flow, parts[0])
            ):
                yield (
                    assertion.line,
                    (f"`{show(part)}` accepts several values: assert the exact value the reference produces"),
                )


_CATCHES = re.compile(r"CATCHES:\s*(.*)", re.IGNORECASE | re.DOTALL)


def check_catches(case: Case) -> Iterator[Hit]:
    doc = case.docstring()
    minimum = case.config.catches_min_chars
    if not doc:
        yield case.line, "add a docstring `CATCHES: <the wrong behaviour this test catches>`"
        return
    match = _CATCHES.search(doc)
    if match is None:
        yield case.line, "the docstring has no `CATCHES:` line saying what bug the test catches"
        return
    text = " ".join(match.group(1).split())
    if len(text) < minimum:
        yield (
            case.line,
            (
                f"the `CATCHES:` text is {len(text)} characters; describe the wrong behaviour this "
                f"test catches in at least {minimum}"
            ),
        )
