"""Mutants from the tree-sitter parse: one walk for C, C++, Rust, Go and Python.

Operators: `relational` (`<` to `<=` or `>=`, `==` to `!=`), `arithmetic` (`+` to `-`, `*`
to `/`, shifts, bitwise, their compound assignments, `++` to `--`), `logical` (`&&` to
`||`, `and` to `or`), `negation` (a `!` or `not` removed), `constant` (an integer literal
moved by one; `true` to `false`), `statement` (an expression statement, `break` or
`continue` dropped) and `return` (a return of the zero value inserted before a function
body's first statement). Each mutant is one byte-range replacement in one file; the
grammars agree on these node and token names, so only the texts of a few replacements
differ by language.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from taskfoundry.mutation import OPERATORS
from taskfoundry.syntax.languages import EXT_LANGUAGE
from taskfoundry.syntax.parse import parse

# token text -> replacements, by operator
_REPLACE: dict[str, dict[str, tuple[str, ...]]] = {
    "relational": {
        "<": ("<=", ">="),
        "<=": ("<", ">"),
        ">": (">=", "<="),
        ">=": (">", "<"),
        "==": ("!=",),
        "!=": ("==",),
    },
    "arithmetic": {
        "+": ("-",),
        "-": ("+",),
        "*": ("/",),
        "/": ("*",),
        "%": ("/",),
        "//": ("/",),
        "**": ("*",),
        "<<": (">>",),
        ">>": ("<<",),
        "&": ("|",),
        "|": ("&",),
        "^": ("&",),
        "+=": ("-=",),
        "-=": ("+=",),
        "*=": ("/=",),
        "/=": ("*=",),
        "++": ("--",),
        "--": ("++",),
    },
    "logical": {"&&": ("||",), "||": ("&&",), "and": ("or",), "or": ("and",)},
}
# expression nodes whose operator token is mutated (binary, comparison, boolean, compound
# assignment, increment: the grammars' names for them)
_OPERATOR_PARENTS = {
    "binary_expression",
    "binary_operator",
    "boolean_operator",
    "comparison_operator",
    "assignment_expression",
    "compound_assignment_expr",
    "assignment_statement",
    "augmented_assignment",
    "update_expression",
    "inc_statement",
    "dec_statement",
}
_NEGATIONS = {("unary_expression", "!"), ("not_operator", "not")}
_INTEGERS = {"number_literal", "integer_literal", "int_literal", "integer"}
_BOOLEANS = {"true": "false", "false": "true", "True": "False", "False": "True"}
_DROPPABLE = {
    "expression_statement",
    "break_statement",
    "continue_statement",
    "inc_statement",
    "dec_statement",
    "assignment_statement",  # Go's `x = f()` (C's and Rust's are expression statements)
}
_FUNCTIONS = {"function_definition", "function_item", "function_declaration", "method_declaration"}
# constants here are not values the program computes with (array sizes, #if, attributes)
_NO_CONSTANTS = {
    "preproc_if",
    "preproc_ifdef",
    "preproc_elif",
    "preproc_def",
    "preproc_function_def",
    "preproc_call",
    "array_declarator",
    "attribute_item",
    "inner_attribute_item",
    "attribute_specifier",
    "bitfield_clause",
    "enumerator",
    "case_statement",
    "template_argument_list",
    "array_type",
}
_EMPTY_STATEMENT = {"c": ";", "cpp": ";", "rust": ";", "go": "", "python": "pass"}
_INT = re.compile(r"(?i)^(0x[0-9a-f_']+|0o[0-7_]+|0b[01_']+|[0-9][0-9_']*)([a-z][a-z0-9]*)?$")


@dataclass(frozen=True)
class Mutant:
    """One change: bytes [start, end) of `file` (relative to the repository root) replaced."""

    file: str
    line: int  # 1-based line of the changed token (of the statement, for whole statements)
    operator: str
    start: int
    end: int
    original: str
    replacement: str

    @property
    def id(self) -> str:
        key = f"{self.file}:{self.start}:{self.end}:{self.operator}:{self.replacement}"
        return hashlib.sha256(key.encode()).hexdigest()[:12]

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.replacement.encode() + source[self.end :]


def language_of(path: str) -> str | None:
    for ext, lang in EXT_LANGUAGE.items():
        if path.endswith(ext):
            return lang
    return None


def mutants_of(file: str, source: bytes, operators: tuple[str, ...] = OPERATORS) -> list[Mutant]:
    """Every mutant of one source file, in source order; [] for a language without a grammar."""
    lang = language_of(file)
    if lang is None:
        return []
    found: dict[tuple[int, int, str], Mutant] = {}
    for mutant in _walk(parse(source, lang).root_node, file, lang):
        if mutant.operator in operators:
            found.setdefault((mutant.start, mutant.end, mutant.replacement), mutant)
    return sorted(found.values(), key=lambda m: (m.start, m.end, m.replacement))


def _walk(root: Node, file: str, lang: str) -> Iterator[Mutant]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("comment", "string_literal", "string", "raw_string_literal") or node.is_error:
            continue
        yield from _at(node, file, lang)
        stack.extend(reversed(node.children))


def _at(node: Node, file: str, lang: str) -> Iterator[Mutant]:
    parent = node.parent
    text = _text(node)
    if not node.is_named and parent is not None:
        if parent.type in _OPERATOR_PARENTS:
            for operator, table in _REPLACE.items():
                for new in table.get(text, ()):
                    yield _mutant(file, node, operator, new)
        if (parent.type, text) in _NEGATIONS and parent.child_count == 2:
            yield _mutant(file, parent, "negation", _text(parent.children[1]))
    if node.type in _INTEGERS and not _inside(node, _NO_CONSTANTS):
        yield from _constants(file, node, lang)
    if node.type in _BOOLEANS and text in _BOOLEANS and not _inside(node, _NO_CONSTANTS):
        yield _mutant(file, node, "constant", _BOOLEANS[text])
    if node.type in _DROPPABLE and _droppable(node, lang):
        yield _mutant(file, node, "statement", _EMPTY_STATEMENT[lang])
    if node.type in _FUNCTIONS:
        early = _early_return(node, file, lang)
        if early is not None:
            yield early


def _constants(file: str, node: Node, lang: str) -> Iterator[Mutant]:
    match = _INT.match(_text(node))
    if match is None:
        return  # a float, or a form we do not rewrite
    digits, suffix = match.group(1), match.group(2) or ""
    value = _int_value(digits, lang)
    if value is None:
        return
    for new in (value + 1, value - 1):
        if new >= 0:
            yield _mutant(file, node, "constant", _int_text(new, digits, lang) + suffix)


def _int_value(digits: str, lang: str) -> int | None:
    clean = digits.replace("_", "").replace("'", "").lower()
    try:
        if lang in ("c", "cpp") and len(clean) > 1 and clean[0] == "0" and clean[1].isdigit():
            return int(clean, 8)
        return int(clean, 0)
    except ValueError:
        return None


def _int_text(value: int, digits: str, lang: str) -> str:
    """`value` written in the base `digits` was written in."""
    low = digits.lower()
    if low.startswith("0x"):
        return digits[:2] + format(value, "X" if digits[2:].isupper() else "x")
    if low.startswith("0b"):
        return digits[:2] + format(value, "b")
    if low.startswith("0o"):
        return digits[:2] + format(value, "o")
    if lang in ("c", "cpp") and len(low) > 1 and low[0] == "0":
        return "0" + format(value, "o")
    return str(value)


def _droppable(node: Node, lang: str) -> bool:
    if node.type == "assignment_statement":
        return lang == "go" and _text(node.child_by_field_name("operator") or node) != ":="
    if node.type != "expression_statement":
        return True
    if lang == "rust":  # a block-like expression without `;` is a value, not a statement
        return _text(node).rstrip().endswith(";")
    if lang == "python":  # a docstring or bare constant: dropping changes nothing
        first = node.named_children[0] if node.named_children else None
        return first is not None and first.type in ("call", "assignment", "augmented_assignment")
    return bool(node.named_children)


def _early_return(fn: Node, file: str, lang: str) -> Mutant | None:
    """`return <zero value>` inserted before the first statement of `fn`'s body."""
    body = fn.child_by_field_name("body")
    first = _first_statement(body, lang) if body is not None else None
    value = _return_text(fn, lang) if first is not None else None
    if first is None or value is None:
        return None
    text = f"{value} "
    if lang == "python":
        column = first.start_point[1]
        if first.start_point[0] == fn.start_point[0] or column == 0:
            return None  # `def f(): return 1`: no line of its own to go before
        text = f"{value}\n{' ' * column}"
    at = first.start_byte
    return Mutant(file, first.start_point[0] + 1, "return", at, at, "", text)


def _first_statement(body: Node, lang: str) -> Node | None:
    holder = body
    if lang == "go":
        holder = next((c for c in body.named_children if c.type == "statement_list"), body)
    for child in holder.named_children:
        if child.type not in ("comment", "line_comment", "block_comment"):
            return child
    return None


def _return_text(fn: Node, lang: str) -> str | None:
    if lang == "python":
        return "return None"
    if lang in ("c", "cpp"):
        kind = fn.child_by_field_name("type")
        declarator = fn.child_by_field_name("declarator")
        void = kind is not None and _text(kind) == "void" and declarator is not None
        void = void and declarator is not None and declarator.type == "function_declarator"
        return "return;" if void or kind is None else "return 0;"
    if lang == "rust":
        ret = fn.child_by_field_name("return_type")
        if ret is None or _text(ret) == "()":
            return "return;"
        shown = _text(ret)
        if shown == "!" or shown.startswith("impl "):
            return None
        if shown.startswith("Option<"):
            return "return None;"
        if shown.startswith("Result<"):
            return "return Ok(Default::default());"
        return "return false;" if shown == "bool" else "return Default::default();"
    if lang == "go":
        result = fn.child_by_field_name("result")
        if result is None:
            return "return;"
        if result.type != "parameter_list":
            return f"return *new({_text(result)});"
        params = [p for p in result.named_children if p.type == "parameter_declaration"]
        if any(p.child_by_field_name("name") is not None for p in params):
            return "return;"  # named results
        types = [_text(p.child_by_field_name("type") or p) for p in params]
        return "return " + ", ".join(f"*new({t})" for t in types) + ";"
    return None


def _inside(node: Node, kinds: set[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in kinds:
            return True
        parent = parent.parent
    return False


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _mutant(file: str, node: Node, operator: str, replacement: str) -> Mutant:
    return Mutant(
        file=file,
        line=node.start_point[0] + 1,
        operator=operator,
        start=node.start_byte,
        end=node.end_byte,
        original=_text(node),
        replacement=replacement,
    )
