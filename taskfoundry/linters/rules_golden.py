"""Rules on golden values: expected-output files and large expected literals.

A *golden* is an expected value kept apart from the test's logic: a file read from a
golden-looking path (`golden/`, `expected`, `snapshot`, `fixtures`, `__file__`-relative, ...)
or a string literal of at least `golden_literal_min` characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from taskfoundry.linters import origins as o
from taskfoundry.linters.cstutil import call_name, code, comparison, literal_value, method_name
from taskfoundry.linters.facts import Assertion, Case
from taskfoundry.linters.kinds import WHOLE_METHODS

Hit = tuple[int, str]
_EMPTY = cst.Module([])
WHOLE_CALLS = frozenset(
    {"json.loads", "sorted", "set", "list", "str", "bytes", "textwrap.dedent", "tuple", "frozenset"}
)


# a file path: `dir/name`, `name.ext` (an extension with a letter), not a URL or a version
_PATH = re.compile(
    r"(?<![\w/.:-])((?:[\w.-]+/)+[\w.-]*\w|[\w-]+(?:\.[\w-]+)*\.(?=\w*[A-Za-z])\w{1,10})(?![\w/])"
)
# a line that calls the file it names the expected output
_GOLDEN_LINE = re.compile(r"\bgolden\b|\bsnapshots?\b|\bexpected[ _-]?(?:output|file|result)s?\b", re.I)


def golden_mentions(doc: str) -> list[str]:
    """Files a docstring names as goldens: a golden-looking path (`expected/x.out`), or any
    path on a line that calls it the golden, snapshot or expected output."""
    found: list[str] = []
    for line in doc.splitlines():
        for path in _PATH.findall(line):
            if "://" in line and path in line.split("://", 1)[1]:
                continue
            if o.is_golden_path(path) or _GOLDEN_LINE.search(line):
                found.append(path)
    return list(dict.fromkeys(found))


def _body_text(case: Case) -> str:
    """The test's source without its docstring."""
    body = case.func.body
    stmts = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    if case.docstring() is not None and stmts:
        stmts = stmts[1:]
    return "\n".join(_EMPTY.code_for_node(s) for s in stmts)


def check_golden_docstring(case: Case) -> Iterator[Hit]:
    """ProgramBench's Table 8: a golden file mentioned in the docstring is not found in the
    test body (the test says it checks against a file it never reads)."""
    doc = case.docstring()
    if not doc:
        return
    body = _body_text(case)
    for path in golden_mentions(doc):
        if path not in body and path.rsplit("/", 1)[-1] not in body:
            yield (
                case.line,
                (
                    f"the docstring names the golden file `{path}` but the test never uses it: "
                    "compare the output with that file, or say in the docstring what is checked"
                ),
            )


def check_expected_from_docstring(case: Case) -> Iterator[Hit]:
    for assertion in case.assertions:
        if o.DOC in case.flow.origins(assertion.expr):
            yield (
                assertion.line,
                (
                    "the expected value is read from the test's own docstring: write it as a "
                    "literal (or a golden file) so the check does not depend on documentation text"
                ),
            )


def _read_key(case: Case, node: cst.BaseExpression) -> str | None:
    value = case.flow.single_value(node)
    for _ in range(8):  # x = x.strip() must not loop forever
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
            break
        if method_name(value) not in WHOLE_METHODS:
            break
        value = case.flow.single_value(value.func.value)
    if not isinstance(value, cst.Call):
        return None
    path = case.flow.files.read_path(value)
    return case.flow.path_key(path) if path is not None else None


def _same_value(case: Case, node: cst.BaseExpression, written: cst.BaseExpression) -> bool:
    mine, theirs = case.flow.single_value(node), case.flow.single_value(written)
    if code(mine) == code(theirs):
        return True
    value = literal_value(mine)
    return value is not None and value == literal_value(theirs)


def _rewritten(case: Case, assertion: Assertion) -> str | None:
    """Key of a file the test wrote itself and then asserts holds what it wrote."""
    parts = comparison(assertion.expr)
    if not case.flow.files.writes or parts is None or parts[1] != "Equal":
        return None
    left, _, right = parts
    for side, other in ((left, right), (right, left)):
        key = _read_key(case, side)
        if key is None:
            continue
        for write in case.flow.files.writes_to(key):
            if write.value is not None and _same_value(case, other, write.value):
                return key
    return None


def check_golden_written_in_test(case: Case) -> Iterator[Hit]:
    for assertion in case.assertions:
        if o.WRITTEN_FROM_PROGRAM in case.flow.origins(assertion.expr):
            yield (
                assertion.line,
                (
                    "the test writes the expected file from the program's own output and then "
                    "compares against it, so it checks nothing: ship the expected file with the "
                    "suite, or assert a literal"
                ),
            )
            continue
        key = _rewritten(case, assertion)
        if key is not None:
            yield (
                assertion.line,
                (
                    f"the test writes `{key}` itself and asserts it holds what it wrote, so a "
                    "program that writes nothing passes: assert a file only the program creates"
                ),
            )


def is_whole(case: Case, node: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether an expression is a whole value (a read, a literal, a name for one, strip()...)."""
    if depth > 8:
        return False
    if literal_value(node) is not None or isinstance(node, cst.Attribute):
        return True
    if isinstance(node, cst.Name):
        defs = case.flow.definitions(node.value)
        return bool(defs) and all(not d.element and is_whole(case, d.value, depth + 1) for d in defs)
    if isinstance(node, cst.Call):
        if case.flow.files.read_path(node) is not None:
            return True
        if method_name(node) in WHOLE_METHODS and isinstance(node.func, cst.Attribute):
            return is_whole(case, node.func.value, depth + 1)
        if call_name(node) in WHOLE_CALLS and node.args:
            return is_whole(case, node.args[0].value, depth + 1)
    return False


def _compares_whole(case: Case, assertion: Assertion) -> bool:
    expr = assertion.expr
    if isinstance(expr, cst.Call) and (call_name(expr) or "").startswith("filecmp."):
        return True
    parts = comparison(expr)
    if parts is None or parts[1] != "Equal":
        return False
    return any(o.GOLDEN in case.flow.origins(side) and is_whole(case, side) for side in (parts[0], parts[2]))


def check_golden_no_equality(case: Case) -> Iterator[Hit]:
    golden = [a for a in case.assertions if o.GOLDEN in case.flow.origins(a.expr)]
    if golden and not any(_compares_whole(case, a) for a in golden):
        yield (
            golden[0].line,
            (
                "the golden value is only checked in part (`in`, startswith, len, a slice): "
                "compare the whole output with it using `==`"
            ),
        )
