"""Mutant schemata: one source file rewritten so that every chosen mutant is in it, each
behind a run-time switch (the environment variable `TF_MUTANT` holds the number of the one
mutant that is on; unset or 0: the original program). The file is compiled once for all of
its mutants instead of once per mutant.

A mutant of an expression (an operator, a negation, a constant) guards the smallest
expression around its bytes: `(on(7) ? (mutated) : (original))` in C and C++, an `if`
expression in Rust, a conditional expression in Python. Go has no conditional expression,
so there the statement around it is guarded: `if on(7) { mutated } else { original }`, as is
a dropped statement and an inserted early return in every language; a Go declaration, which
an `if` would scope, gets expression guards (a closure for a boolean, else a generic helper).
Guards nest: a mutant inside another's expression sits in the original branch of the outer
guard, so whichever one mutant is switched on runs exactly its own text.

Where a guarded form does not compile (a constant expression, an lvalue, a Go helper the
context types otherwise), the compiler's diagnostics name the line: `blame` maps them
back to the guards there, so those mutants can be left out and the rest built.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from taskfoundry.mutation.operators import Mutant, language_of
from taskfoundry.syntax.parse import parse

ENV = "TF_MUTANT"

# expressions a guard may wrap, by language (the smallest one around the mutated bytes)
_EXPRESSIONS = {
    "c": {
        "binary_expression",
        "unary_expression",
        "update_expression",
        "assignment_expression",
        "number_literal",
        "true",
        "false",
    },
    "rust": {
        "binary_expression",
        "unary_expression",
        "compound_assignment_expr",
        "integer_literal",
        "boolean_literal",
    },
    "python": {
        "binary_operator",
        "comparison_operator",
        "boolean_operator",
        "not_operator",
        "integer",
        "true",
        "false",
    },
}
_EXPRESSIONS["cpp"] = _EXPRESSIONS["c"]
# nodes that hold statements: a guard of a whole statement must sit directly in one
_BLOCKS = {
    "c": {"compound_statement", "case_statement"},
    "cpp": {"compound_statement", "case_statement"},
    "rust": {"block"},
    "go": {"statement_list"},
    "python": {"block", "module"},
}
# where a value must be known when compiling: no run-time switch can choose it
_CONSTANT_CONTEXT = {
    "c": {"enumerator", "bitfield_clause", "case_statement", "static_assert_declaration"},
    "rust": {"const_item", "static_item", "array_type", "match_pattern", "const_block", "attribute_item"},
    "go": {"const_declaration"},
    "python": set(),
}
_CONSTANT_CONTEXT["cpp"] = _CONSTANT_CONTEXT["c"] | {"template_argument_list"}
_GO_STOP = {"block", "statement_list", "source_file", "func_literal", "function_declaration"}
_GO_BOOL_OPS = {"==", "!=", "<", "<=", ">", ">=", "&&", "||"}
_GO_NUMBER_OPS = {"+", "-", "*", "/"}  # also on floats; the rest on integers alone
_GO_INTEGER_OPS = {"%", "<<", ">>", "&", "|", "^", "&^"}
_GO_INTEGERS = (
    "~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr"
)
_INTEGER_LITERALS = {"int_literal"}
_SCOPED = {
    "short_var_declaration",
    "var_declaration",
    "const_declaration",
    "labeled_statement",
    "let_declaration",
    "declaration",
}
# a newline in these may not be mere whitespace (strings, comments, preprocessor lines)
_UNSAFE_FLAT = re.compile(r"[\"'#`]|//|/\*")
_PY_COND = f'__import__("os").environ.get("{ENV}") == "{{n}}"'


@dataclass
class Guard:
    """One guarded span of the original file: the mutants there, one per switch number."""

    start: int
    end: int
    statement: bool  # an `if` around a statement, else a conditional expression
    form: str = ""  # Go's expression guards: "bool" (a closure), "pick" or "operator" (a helper)
    mutants: list[tuple[int, Mutant]] = field(default_factory=list)
    out_start: int = 0  # where its text sits in the schema, once rendered
    out_end: int = 0
    helper: tuple[int, int] | None = None  # where its Go helper's definition sits in the schema


@dataclass
class Schema:
    """A file's schema: its text, its guards, and the mutants no guard could hold."""

    file: str
    language: str
    text: bytes
    guards: list[Guard]
    unguarded: list[Mutant]
    head_lines: int = 0  # lines before the file's own first line that compilers do not count
    watched: set[str] = field(default_factory=set)  # mutants a watch build records (`watch_of`)

    @property
    def switches(self) -> dict[str, int]:
        """Mutant id -> its switch number, for the mutants in the schema."""
        return {m.id: n for g in self.guards for n, m in g.mutants}

    def blame(self, diag: Diagnostic) -> list[Guard]:
        """The guards to blame for an error: the innermost at its line and column, else on its
        line, else every guard on the lines that use the macro it is in (a copied statement
        that expands a macro with a label in it declares the label twice), else the innermost
        on the other lines the compiler showed with it."""
        found = self._at(diag.line, diag.column)
        if not found and diag.macro_uses:
            return [g for line in diag.macro_uses for g in self._on(line) if g not in found]
        for line in diag.shown if not found else ():
            found += [g for g in self._at(line, None) if g not in found]
        return self._chained(found)

    def _chained(self, found: list[Guard]) -> list[Guard]:
        """With each Go operator guard, those of its chain (`a + b + c`: the guards around it or
        in it that start or end where it does): they have its type, so they fail as it does,
        and the compiler names one of them at a time."""
        todo = [g for g in found if g.form == "operator"]
        while todo:
            g = todo.pop()
            for o in self.guards:
                nested = g.start <= o.start and o.end <= g.end or o.start <= g.start and g.end <= o.end
                if o.form == "operator" and o is not g and nested:
                    if (o.start == g.start or o.end == g.end) and o not in found:
                        found.append(o)
                        todo.append(o)
        return found

    def _on(self, line: int) -> list[Guard]:
        lo, hi = self._line_span(line)
        return [g for g in self.guards if g.out_start < hi and g.out_end > lo or _helper_in(g, lo, hi)]

    def _line_span(self, line: int) -> tuple[int, int]:
        line += self.head_lines
        at = _line_starts(self.text)
        lo = at[line - 1] if 0 < line <= len(at) else len(self.text)
        return lo, (at[line] if line < len(at) else len(self.text) + 1)

    def _at(self, line: int, column: int | None) -> list[Guard]:
        lo, hi = self._line_span(line)
        if column is not None:
            at = lo + column - 1
            spot = [g for g in self.guards if g.out_start <= at < g.out_end or _helper_in(g, at, at + 1)]
            if spot:
                return _innermost(spot)
        return _innermost(self._on(line))


def _helper_in(g: Guard, lo: int, hi: int) -> bool:
    return g.helper is not None and g.helper[0] < hi and g.helper[1] > lo


def _innermost(guards: list[Guard]) -> list[Guard]:
    def holds(g: Guard, o: Guard) -> bool:
        return o is not g and g.out_start <= o.out_start and o.out_end <= g.out_end

    return [g for g in guards if not any(holds(g, o) for o in guards)]


def schema_of(file: str, source: bytes, numbered: list[tuple[int, Mutant]]) -> Schema:
    """`source` (the file at `file`) with each (switch number, mutant) guarded."""
    lang = language_of(file)
    if lang is None:
        raise ValueError(f"no grammar for {file}")
    root = parse(source, lang).root_node
    guards: dict[tuple[int, int, bool, str], Guard] = {}
    unguarded: list[Mutant] = []
    for n, m in numbered:
        span = _span(root, source, m, lang)
        if span is None:
            unguarded.append(m)
            continue
        guards.setdefault(span, Guard(*span)).mutants.append((n, m))
    ordered = sorted(guards.values(), key=lambda g: (g.start, g.start != g.end, -g.end))
    tag = hashlib.sha256(file.encode()).hexdigest()[:8]
    renderer = _Renderer(source, lang, tag, root)
    body = renderer.render(ordered)
    head, tail = _prelude(lang, tag, root)
    text = _insert(body, head, root, lang) + tail
    shift = len(head)
    for g in ordered:
        g.out_start += shift
        g.out_end += shift
    for g, helper in renderer.helpers:  # after the file: a compiler's error there blames g
        g.helper = (len(text), len(text) + len(helper))
        text += helper
    return Schema(file, lang, text, ordered, unguarded, head.count(b"\n") if lang in ("c", "cpp") else 0)


def watch_of(file: str, source: bytes, numbered: list[tuple[int, Mutant]], path: str = "") -> Schema:
    """`source` as the original program that records which mutants it infects (weak mutation):
    each pure C expression a mutant changes is computed once as it is and once as each mutant
    would have it, and a mutant whose value differs is written to INFECTED (`tf_infect`). The
    program's own value is the original's, so it runs as the reference does; a mutant no run of
    a test infects behaves there as the reference does (a pure expression, a deterministic
    program), and that test need not run on it. Other languages and impure expressions
    (calls, assignments, `++`): no watch. `path`: where it writes (default INFECTED)."""
    schema = schema_of(file, source, numbered)
    if schema.language != "c":
        return Schema(file, schema.language, source, [], [])
    root = parse(source, "c").root_node
    tag = hashlib.sha256(file.encode()).hexdigest()[:8]
    watcher = _Watcher(source, "c", tag, root)
    body = watcher.render(schema.guards)
    head = f"static void tf_inf_{tag}(int);\n#line 1\n"
    text = head.encode() + body + _WATCH_TAIL.format(tag=tag, path=path or INFECTED).encode()
    return Schema(file, "c", text, [], [], 1, watched=watcher.watched)


def _line_starts(text: bytes) -> list[int]:
    return [0, *(i + 1 for i, c in enumerate(text) if c == 0x0A)]


def _span(root: Node, source: bytes, m: Mutant, lang: str) -> tuple[int, int, bool, str] | None:
    """The bytes a guard of `m` wraps, whether it guards a statement, and its form (Go's
    expression guards); None: no guard fits."""
    if m.operator == "return":  # an insertion before a statement
        return (m.start, m.end, True, "")
    node: Node | None = root.descendant_for_byte_range(m.start, max(m.start, m.end - 1))
    if node is None or _constant_context(node, lang):
        return None
    span = _guarded_span(node, source, m, lang)
    if span is not None and lang in ("c", "cpp") and _PREPROCESSOR.search(source[span[0] : span[1]]):
        return None  # a guard on the line of an #if, or a copy of one, is not C any more
    return span


def _spanning(node: Node | None, start: int, end: int) -> Node | None:
    """`node` or its nearest ancestor that spans bytes `start`..`end`."""
    while node is not None and not (node.start_byte <= start and end <= node.end_byte):
        node = node.parent
    return node


def _guarded_span(
    node: Node | None, source: bytes, m: Mutant, lang: str
) -> tuple[int, int, bool, str] | None:
    want_statement = m.operator == "statement" or lang == "go"
    node = first = _spanning(node, m.start, m.end)
    while node is not None and node.parent is not None:
        parent = node.parent
        fits = node.start_byte <= m.start and m.end <= node.end_byte
        if fits and not want_statement and node.type in _EXPRESSIONS.get(lang, ()):
            return (node.start_byte, node.end_byte, False, "")
        if fits and parent.type in _BLOCKS[lang] and node.is_named and "comment" not in node.type:
            if node.type in _SCOPED:  # an `if` around it would end its names' scope
                break
            if lang == "python" and not _own_line(source, node):
                return None
            return (node.start_byte, node.end_byte, True, "")
        node = parent
    if lang == "go" and m.operator != "statement" and first is not None:
        return _go_expression(first, m)
    return None


def _go_expression(node: Node, m: Mutant) -> tuple[int, int, bool, str] | None:
    """Go's guard where no `if` can hold the statement (a declaration, a package-level var):
    the innermost boolean expression around the mutant, a closure returning the switched-on
    text; else the mutated operator's expression or literal, through a generic helper of its
    own (`_Renderer._go_helper`) that evaluates each operand once."""
    cur: Node | None = node
    while cur is not None and cur.type not in _GO_STOP:
        if _go_bool(cur):
            return (cur.start_byte, cur.end_byte, False, "bool")
        cur = cur.parent
    parent = node.parent
    if m.operator == "arithmetic" and parent is not None and parent.type == "binary_expression":
        op = parent.child_by_field_name("operator")
        if op is not None and op.start_byte == m.start and op.type in _GO_INTEGER_OPS | _GO_NUMBER_OPS:
            return (parent.start_byte, parent.end_byte, False, "operator")
    if m.operator == "constant" and node.type in _INTEGER_LITERALS:
        return (node.start_byte, node.end_byte, False, "pick")
    return None


def _go_bool(node: Node) -> bool:
    if node.type in ("true", "false"):
        return True
    op = node.child_by_field_name("operator")
    if node.type == "binary_expression" and op is not None:
        return op.type in _GO_BOOL_OPS
    return node.type == "unary_expression" and op is not None and op.type == "!"


def _constant_context(node: Node, lang: str) -> bool:
    """Inside a constant (Rust's const and static items, array lengths, patterns; C's case
    labels and enumerators), or in C an initializer of a file-scope or `static` variable.
    A Rust match arm's guard (`n if n < 5 =>`) is run-time code, though its node is in the
    pattern's."""
    cur: Node | None = node
    while cur is not None:
        if cur.type == "case_statement":  # its label, not the statements under it
            label = cur.child_by_field_name("value")
            if label is not None and label.start_byte <= node.start_byte < label.end_byte:
                return True
        elif cur.type == "match_pattern" and _in_field(cur, "condition", node):
            pass
        elif cur.type in _CONSTANT_CONTEXT[lang]:
            return True
        if lang in ("c", "cpp") and cur.type == "declaration" and _static_storage(cur):
            return True
        cur = cur.parent
    return False


def _in_field(parent: Node, name: str, node: Node) -> bool:
    child = parent.child_by_field_name(name)
    return child is not None and child.start_byte <= node.start_byte and node.end_byte <= child.end_byte


def _static_storage(decl: Node) -> bool:
    at_file_scope = decl.parent is not None and decl.parent.type in ("translation_unit", "declaration_list")
    storage = any(c.type == "storage_class_specifier" and c.text == b"static" for c in decl.children)
    return at_file_scope or storage


def _own_line(source: bytes, node: Node) -> bool:
    """A Python statement alone at the start of its line (an `if` can take its place)."""
    line_start = node.start_byte - node.start_point[1]
    return source[line_start : node.start_byte].strip() == b""


class _Renderer:
    def __init__(self, source: bytes, lang: str, tag: str, root: Node) -> None:
        self.src, self.lang, self.tag, self.root = source, lang, tag, root
        self.out = bytearray()
        self.helpers: list[tuple[Guard, bytes]] = []  # Go's helpers, to put after the file

    def render(self, guards: list[Guard]) -> bytes:
        self._span(0, len(self.src), guards)
        return bytes(self.out)

    def _span(self, lo: int, hi: int, guards: list[Guard]) -> None:
        """Bytes [lo, hi) of the source with `guards` (sorted, all inside) rendered."""
        at, i = lo, 0
        while i < len(guards):
            g = guards[i]
            inner = []
            i += 1
            while g.start != g.end and i < len(guards) and guards[i].end <= g.end:
                inner.append(guards[i])
                i += 1
            self.out += self.src[at : g.start]
            g.out_start = len(self.out)
            if g.start == g.end:  # inserted statements: `if on(n) { inserted }` each
                for n, m in g.mutants:
                    self.out += self._insertion(n, m.replacement, g.start).encode()
            else:
                self._branches(g, inner)
            g.out_end = len(self.out)
            at = g.end
        self.out += self.src[at:hi]

    def _branches(self, g: Guard, inner: list[Guard]) -> None:
        """`on(a) ? A : on(b) ? B : original`, in the language's words."""
        if g.form == "bool":
            self._go_closure(g, inner)
            return
        if g.form:
            self._go_helper(g, inner)
            return
        for i, (n, m) in enumerate(g.mutants):
            text = self._mutated(g, m)
            self.out += self._open(i, self._cond(n, g.start), text, g.statement).encode()
        self.out += self._else(g.statement).encode()
        self._span(g.start, g.end, inner)
        self.out += self._close(len(g.mutants), g.statement).encode()

    def _one_line(self, text: str, expression: bool = False) -> str:
        """The mutated copy on one line where whitespace allows, so that the lines after it
        keep their numbers (in assertion messages, panics, `__LINE__`). A Go expression that
        compiles has no newline where Go would end a statement, so it may be flattened too."""
        flat = self.lang in ("c", "cpp", "rust") or (self.lang == "go" and expression)
        if "\n" not in text or not flat or _UNSAFE_FLAT.search(text):
            return text
        return text.replace("\r", " ").replace("\n", " ")

    def _mutated(self, g: Guard, m: Mutant) -> str:
        text = self.src[g.start : m.start] + m.replacement.encode() + self.src[m.end : g.end]
        return self._one_line(text.decode(), expression=not g.statement)

    def _go_closure(self, g: Guard, inner: list[Guard]) -> None:
        """A Go boolean expression: `func() bool { if on(a) { return A }; return original }()`."""
        self.out += b"func() bool { "
        for n, m in g.mutants:
            self.out += f"if {self._cond(n, g.start)} {{ return {self._mutated(g, m)} }}; ".encode()
        self.out += b"return "
        self._span(g.start, g.end, inner)
        self.out += b" }()"

    def _go_helper(self, g: Guard, inner: list[Guard]) -> None:
        """A Go literal or operator expression, through a generic function of its own whose type
        the operands give: `tfG_<tag>_<n>(A, B, original)` returns the switched-on literal,
        `tfG_<tag>_<n>(left, right)` computes `left OP right` with the switched-on operator."""
        name = f"tfG_{self.tag}_{g.mutants[0][0]}"
        arms = [(self._cond(n, g.start), m.replacement) for n, m in g.mutants]
        self.out += f"{name}(".encode()
        if g.form == "pick":
            self.out += "".join(f"{new}, " for _, new in arms).encode()
            self._span(g.start, g.end, inner)
            params = "".join(f"m{i} T, " for i in range(len(arms)))
            body = "".join(f"if {c} {{ return m{i} }}; " for i, (c, _) in enumerate(arms)) + "return o"
            helper = f"func {name}[T any]({params}o T) T {{ {body} }}\n"
        else:
            helper = self._go_operator(name, g, inner, arms)
        self.out += b")"
        self.helpers.append((g, helper.encode()))

    def _go_operator(self, name: str, g: Guard, inner: list[Guard], arms: list[tuple[str, str]]) -> str:
        """The operands of a Go operator guard, each rendered once; its helper's text."""
        node = _spanning(self.root.descendant_for_byte_range(g.start, g.end - 1), g.start, g.end)
        assert node is not None
        left, op, right = (node.child_by_field_name(f) for f in ("left", "operator", "right"))
        assert left is not None and op is not None and right is not None
        self._span(left.start_byte, left.end_byte, [i for i in inner if i.end <= left.end_byte])
        self.out += b", "
        self._span(right.start_byte, right.end_byte, [i for i in inner if i.start >= right.start_byte])
        ops = {op.type, *(new for _, new in arms)}
        kinds = _GO_INTEGERS if ops & _GO_INTEGER_OPS else f"{_GO_INTEGERS} | ~float32 | ~float64"
        shift = bool(ops & {"<<", ">>"})  # a shift's count has a type of its own
        types = f"[T {kinds}, U {_GO_INTEGERS}](a T, b U)" if shift else f"[T {kinds}](a T, b T)"
        body = "".join(f"if {c} {{ return a {new} b }}; " for c, new in arms) + f"return a {op.type} b"
        return f"func {name}{types} T {{ {body} }}\n"

    # the language's words ------------------------------------------------------------
    def _cond(self, n: int, at: int) -> str:
        if self.lang == "go":
            return f'tfMut_{self.tag} == "{n}"'
        if self.lang == "python":
            return _PY_COND.format(n=n)
        prefix = rust_call_prefix(self.root, at) if self.lang == "rust" else ""
        return f"{prefix}tf_mut_{self.tag}({n})"

    def _open(self, i: int, cond: str, mutated: str, statement: bool) -> str:
        if self.lang == "python":
            if statement:
                ind = self._indent()
                return f"if {cond}:\n{ind}    {mutated}\n{ind}el"
            return f"({mutated} if {cond} else "
        if self.lang in ("c", "cpp"):
            return f"if ({cond}) {{ {mutated} }} else " if statement else f"(({cond}) ? ({mutated}) : "
        # Rust and Go: `else if`, never `else (`
        lead = "(" if i == 0 and not statement else ""
        return f"{lead}if {cond} {{ {mutated} }} else "

    def _else(self, statement: bool) -> str:
        if self.lang == "python":  # the last `el` + `se:`, the original indented below it
            return f"se:\n{self._indent()}    " if statement else "("
        if statement or self.lang not in ("c", "cpp"):  # a block: Go, Rust, any statement
            return "{ "
        return "("  # C's conditional expression

    def _close(self, count: int, statement: bool) -> str:
        if self.lang == "python":
            return "" if statement else ")" * (count + 1)
        if statement:
            return " }"
        if self.lang in ("c", "cpp"):
            return ")" * (count + 1)
        return " })"

    def _insertion(self, n: int, text: str, at: int) -> str:
        cond = self._cond(n, at)
        if self.lang == "python":  # text is `return None\n<indent>`
            value, sep, indent = text.partition("\n")
            return f"if {cond}: {value}{sep}{indent}"
        if self.lang in ("c", "cpp"):
            return f"if ({cond}) {{ {text.strip()} }} "
        return (
            f"if {cond} {{ {text.strip()} }}; " if self.lang == "go" else f"if {cond} {{ {text.strip()} }} "
        )

    def _indent(self) -> str:
        start = self.out.rfind(b"\n") + 1
        line = bytes(self.out[start:])
        return line[: len(line) - len(line.lstrip())].decode()


class _Watcher(_Renderer):
    """The original program, each pure guarded expression computed once more per mutant of it
    (a GNU statement expression: gcc and clang), the mutants whose value differs recorded."""

    def __init__(self, source: bytes, lang: str, tag: str, root: Node) -> None:
        super().__init__(source, lang, tag, root)
        self.watched: set[str] = set()

    def _branches(self, g: Guard, inner: list[Guard]) -> None:
        pure = [] if g.statement else [(n, m) for n, m in g.mutants if self._pure(g, m)]
        if not pure:
            self._span(g.start, g.end, inner)
            return
        self.out += b"({ __auto_type tf_o_ = ("
        self._span(g.start, g.end, inner)
        self.out += b"); "
        for n, m in pure:
            text = self._mutated(g, m)
            self.out += f"if (tf_o_ != ({text})) tf_inf_{self.tag}({n}); ".encode()
            self.watched.add(m.id)
        self.out += b"tf_o_; })"

    def _insertion(self, n: int, text: str, at: int) -> str:
        return ""  # an inserted return changes what runs wherever it is reached: no watch

    def _pure(self, g: Guard, m: Mutant) -> bool:
        """No call, assignment, `++`/`--` or comma in the expression or the mutant's text: it
        can be computed twice without the program noticing."""
        node = _spanning(
            self.root.descendant_for_byte_range(g.start, max(g.start, g.end - 1)), g.start, g.end
        )
        if node is None or _IMPURE_TEXT.search(m.replacement):
            return False
        return not any(n.type in _IMPURE for n in _subtree(node))


def _subtree(node: Node) -> list[Node]:
    found, todo = [], [node]
    while todo:
        cur = todo.pop()
        found.append(cur)
        todo.extend(cur.children)
    return found


_IMPURE = {"call_expression", "assignment_expression", "update_expression", "comma_expression"}
_IMPURE_TEXT = re.compile(r"(?<![=!<>])=(?!=)|\+\+|--|\(")
#: where a watch build writes the switch numbers of the mutants it infects, a line each
INFECTED = "/tmp/tfm-infected"
_WATCH_TAIL = """
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((unused)) static void tf_inf_{tag}(int id) {{
  static unsigned char seen[1024];
  if (id >= 0 && id < 8192) {{ if (seen[id >> 3] & (1 << (id & 7))) return; seen[id >> 3] |= 1 << (id & 7); }}
  int fd = open("{path}", O_WRONLY | O_APPEND | O_CREAT, 0666);
  if (fd < 0) return;
  char line[24];
  int len = snprintf(line, sizeof line, "%d\\n", id);
  if (write(fd, line, len) < 0) {{ }}
  close(fd);
}}
"""


def _prelude(lang: str, tag: str, root: Node) -> tuple[bytes, bytes]:
    """Text before (at the start, or after Go's package clause) and after the file's own."""
    name = f"tf_mut_{tag}"
    if lang in ("c", "cpp"):
        guard = f"TF_MUT_{tag.upper()}"
        head = f"static int {name}(int);\n#line 1\n"  # the file's own lines keep their numbers
        tail = (
            f"\n#ifndef {guard}\n#define {guard}\n#include <stdlib.h>\n"
            f"__attribute__((unused)) static int {name}(int id) {{\n"
            f"  static int on = -1;\n"
            f'  if (on < 0) {{ const char *v = getenv("{ENV}"); on = v ? atoi(v) : 0; }}\n'
            f"  return on == id;\n}}\n#endif\n"
        )
        return head.encode(), tail.encode()
    if lang == "rust":
        tail = (
            f"\n#[allow(dead_code)]\nfn {name}(id: usize) -> bool {{\n"
            "    use ::std::sync::atomic::{AtomicUsize, Ordering};\n"
            "    static ON: AtomicUsize = AtomicUsize::new(usize::MAX);\n"
            "    let mut on = ON.load(Ordering::Relaxed);\n"
            f'    if on == usize::MAX {{ on = ::std::env::var("{ENV}").ok()'
            ".and_then(|v| v.parse().ok()).unwrap_or(0); ON.store(on, Ordering::Relaxed); }\n"
            "    on == id\n}\n"
        )
        return b"", tail.encode()
    if lang == "go":
        head = f'; import tfos_{tag} "os"'
        tail = f'\nvar tfMut_{tag} = tfos_{tag}.Getenv("{ENV}")\n'
        return head.encode(), tail.encode()
    return b"", b""


def _insert(body: bytes, head: bytes, root: Node, lang: str) -> bytes:
    """`head` at the start of `body`, or for Go right after the package clause (the guards'
    out offsets are then wrong by len(head) before that point; none can be there)."""
    if lang != "go" or not head:
        return head + body
    clause = next((c for c in root.children if c.type == "package_clause"), None)
    at = clause.end_byte if clause is not None else 0
    return body[:at] + head + body[at:]


def rust_call_prefix(root: Node, at: int) -> str:
    """`super::` once per inline `mod` around byte `at`: the helper is at the file's top."""
    node: Node | None = root.descendant_for_byte_range(at, at)
    depth = 0
    while node is not None:
        if node.type == "mod_item":
            depth += 1
        node = node.parent
    return "super::" * depth


_PREPROCESSOR = re.compile(rb"(?:^|\n)[ \t]*#")
# gcc and clang name the line a macro was used on after an error inside its definition
_MACRO_USE = re.compile(
    r"^(?P<path>[^\s:][^:\n]*):(?P<line>\d+):(?:\d+:)? note: (?:in expansion of macro|expanded from macro)",
    re.M,
)
_GCC = re.compile(r"^(?P<path>[^\s:][^:\n]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error\b", re.M)
_GO = re.compile(r"^(?P<path>[^\s:#][^:\n]*\.go):(?P<line>\d+):(?:(?P<col>\d+):)? ", re.M)
_RUST_BLOCK = re.compile(r"^(?=error|warning)", re.M)
_RUST_AT = re.compile(r"^\s*--> (?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+)", re.M)
_RUST_SHOWN = re.compile(r"^\s*(\d+) \|", re.M)


@dataclass(frozen=True)
class Diagnostic:
    """An error of a build: where the compiler points, and the other lines it shows (rustc
    shows the lines that gave an expression its type, when the error is elsewhere)."""

    path: str  # as the compiler wrote it
    line: int
    column: int | None = None
    shown: tuple[int, ...] = ()
    macro_uses: tuple[int, ...] = ()  # C: lines that use the macro whose definition the error is in


def diagnostics(lang: str, output: str) -> list[Diagnostic]:
    """The errors in a build's output (C and C++: gcc's and clang's form)."""
    if lang == "rust":
        return _rust_diagnostics(output)
    found = []
    errors = list((_GO if lang == "go" else _GCC).finditer(output))
    for i, m in enumerate(errors):
        col = m.group("col")
        end = errors[i + 1].start() if i + 1 < len(errors) else len(output)
        uses = tuple(
            int(u.group("line"))
            for u in _MACRO_USE.finditer(output, m.end(), end)
            if u.group("path") == m.group("path")
        )
        found.append(Diagnostic(m.group("path"), int(m.group("line")), int(col) if col else None, (), uses))
    return found


def _rust_diagnostics(output: str) -> list[Diagnostic]:
    found = []
    for block in _RUST_BLOCK.split(output):
        at = _RUST_AT.search(block)
        if block.startswith("error") and at is not None:
            shown = tuple(int(n) for n in _RUST_SHOWN.findall(block))
            found.append(Diagnostic(at.group("path"), int(at.group("line")), int(at.group("col")), shown))
    return found


def match_path(written: str, files: list[str]) -> str | None:
    """Which of `files` (repository-relative) a compiler's path names."""
    clean = written.strip().removeprefix("./")
    for f in files:
        if clean == f or clean.endswith("/" + f):
            return f
    base = [f for f in files if f.rsplit("/", 1)[-1] == clean.rsplit("/", 1)[-1]]
    return base[0] if len(base) == 1 else None
