"""A feature submission's own code, read before it is graded: what it added, and whether
that reaches for the grader.

The tests import the submission into the pytest process, so submitted code could rewrite
pytest's results in memory, read the calling test's expected values from its frame, or
end the run early. Only what the submission adds or changes is read (lines that the start
state does not have at that place, by a line diff per file), so a repository that already
uses `inspect` or `sys._getframe` elsewhere is not flagged. A hit is the verdict
`forbidden_code`. The same new lines are what the runtime guard (assets/feature_guard.py)
watches in the container.
"""

from __future__ import annotations

import ast
import difflib
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

# level 2: the grader appends a submitted module to the stripped one after SEPARATOR, and
# removes the pytest settings named in STEERING wherever they are (the reference's are
# restored): both defined once, in the standalone asset that does it in the container
from taskfoundry.assets.feature.feature_compose import SEPARATOR
from taskfoundry.assets.feature.feature_compose import STEERING as _STEERING

STEERING = frozenset(_STEERING)

# (module, attribute) pairs: a call or a reference to any of them
_ATTRS = {
    ("sys", "_getframe"): "frame access",
    ("sys", "_current_frames"): "frame access",
    ("sys", "_current_exceptions"): "frame access",
    ("inspect", "currentframe"): "frame access",
    ("inspect", "stack"): "frame access",
    ("inspect", "trace"): "frame access",
    ("inspect", "getouterframes"): "frame access",
    ("inspect", "getinnerframes"): "frame access",
    ("inspect", "getframeinfo"): "frame access",
    ("traceback", "walk_stack"): "frame access",
    ("traceback", "walk_tb"): "frame access",
    ("gc", "get_referrers"): "gc referrers",
    ("gc", "get_referents"): "gc referrers",
    ("gc", "get_objects"): "gc referrers",
    ("sys", "settrace"): "trace/profile hook",
    ("sys", "setprofile"): "trace/profile hook",
    ("sys", "monitoring"): "trace/profile hook",
    ("threading", "settrace"): "trace/profile hook",
    ("threading", "setprofile"): "trace/profile hook",
    ("threading", "settrace_all_threads"): "trace/profile hook",
    ("threading", "setprofile_all_threads"): "trace/profile hook",
    ("os", "_exit"): "os._exit",
    ("posix", "_exit"): "os._exit",
    ("sys", "modules"): "sys.modules/builtins tampering",
    ("sys", "meta_path"): "sys.modules/builtins tampering",
    ("sys", "path_hooks"): "sys.modules/builtins tampering",
    ("sys", "addaudithook"): "sys.modules/builtins tampering",
}
# attributes that only frames, tracebacks, generators and coroutines have
_FRAME_ATTRS = {
    "f_back",
    "f_locals",
    "f_globals",
    "f_builtins",
    "tb_frame",
    "gi_frame",
    "cr_frame",
    "ag_frame",
}
_MODULES = {
    "_pytest": "pytest/pluggy internals",
    "pytest": "pytest/pluggy internals",
    "pluggy": "pytest/pluggy internals",
    "builtins": "sys.modules/builtins tampering",
    "__builtin__": "sys.modules/builtins tampering",
    "ctypes": "sys.modules/builtins tampering",
    "gc": None,  # importing gc is fine; its referrer functions are not
}
_NAMES = {"__builtins__": "sys.modules/builtins tampering"}
# names that reach the grader when spelled as strings (getattr(sys, "_getframe"), ...)
_STRINGS = {
    "_getframe": "frame access",
    "currentframe": "frame access",
    "f_back": "frame access",
    "f_locals": "frame access",
    "tb_frame": "frame access",
    "get_referrers": "gc referrers",
    "settrace": "trace/profile hook",
    "setprofile": "trace/profile hook",
    "_pytest": "pytest/pluggy internals",
    "pluggy": "pytest/pluggy internals",
    "tf_feature_guard": "pytest/pluggy internals",
}


# what the reference's own code seldom needs and an attack on the grader always does: running
# code made at run time, imports by computed name, another module's namespace, names built
# from pieces, payloads decoded at run time, handlers that run outside any test (issue 56).
# Allowed in a file whose reference uses the same rule anywhere (`CAPABILITIES`).
_CALLS = {
    "exec": "dynamic code",
    "eval": "dynamic code",
    "compile": "dynamic code",
    "__import__": "dynamic import",
    "globals": "namespace access",
    "vars": "namespace access",
    "breakpoint": "dynamic code",
}
_NAMED_BY_ARG = frozenset({"getattr", "setattr", "delattr", "hasattr"})
_CAPABILITY_ATTRS = {
    ("importlib", "import_module"): "dynamic import",
    ("importlib", "__import__"): "dynamic import",
    ("atexit", "register"): "exit or signal handler",
    ("signal", "signal"): "exit or signal handler",
    ("signal", "setitimer"): "exit or signal handler",
    ("signal", "raise_signal"): "exit or signal handler",
    ("base64", "b64decode"): "encoded payload",
    ("base64", "b85decode"): "encoded payload",
    ("base64", "a85decode"): "encoded payload",
    ("base64", "b32decode"): "encoded payload",
    ("codecs", "decode"): "encoded payload",
    ("zlib", "decompress"): "encoded payload",
    ("marshal", "loads"): "encoded payload",
    ("pickle", "loads"): "encoded payload",
    ("bytes", "fromhex"): "encoded payload",
}
CAPABILITIES = frozenset(
    {*_CALLS.values(), *_CAPABILITY_ATTRS.values(), "computed attribute name", "string-built name"}
)


def _capability(node: ast.AST, aliases: Mapping[str, str]) -> str | None:
    """The capability rule `node` falls under, if any."""
    if isinstance(node, ast.Name) and node.id in _CALLS and isinstance(node.ctx, ast.Load):
        return _CALLS[node.id]  # called or handed on
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NAMED_BY_ARG:
        name = node.args[1] if len(node.args) > 1 else None
        if name is not None and not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return "computed attribute name"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _literal(node):
        return "string-built name"
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        module = aliases.get(head.split(".")[0], head.split(".")[0]) if head else ""
        return _CAPABILITY_ATTRS.get((module, node.attr))
    return None


def _literal(node: ast.expr) -> bool:
    """Text made only of string constants ("_py" + "test"): a name spelled so no scan reads it."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and _token(node.value)
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and _literal(node.left)
        and _literal(node.right)
    )


# comparison and truth methods: a value that defines them can claim to equal anything
DUNDERS = frozenset(
    {
        "__eq__",
        "__ne__",
        "__hash__",
        "__bool__",
        "__len__",
        "__contains__",
        "__instancecheck__",
        "__subclasscheck__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__cmp__",
        "__class__",
        "__getattribute__",
        "__getattr__",
    }
)
# top-level modules a workspace file must not be named like: they would stand in for the
# grader's own (pytest, its plugins, the standard library)
GRADER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "py", "iniconfig", "xdist", "pytest_timeout"})
STDLIB = frozenset(sys.stdlib_module_names) | {"__main__", "sitecustomize", "usercustomize"}

# files Python runs that are not source: a submission may not add or change them
_OPAQUE = (".so", ".pyd", ".pyc", ".pyo", ".pth")


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    rule: str
    text: str
    anchor: str = ""  # the construct's own first line: what the reference is matched on

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.text}"


def new_lines(before: str | None, after: str) -> set[int]:
    """1-based numbers of the lines of `after` that `before` does not have at that place."""
    new = after.split("\n")
    if before is None:
        return set(range(1, len(new) + 1))
    matcher = difflib.SequenceMatcher(None, before.split("\n"), new, autojunk=False)
    out: set[int] = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            out.update(range(j1 + 1, j2 + 1))
    return out


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


def _token(text: str) -> bool:
    """A string that could name an attribute or module (prose, docstrings included, cannot)."""
    return 0 < len(text) < 200 and not any(c.isspace() for c in text)


def _nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """(node, rule) for every construct that reaches for the grader."""
    aliases: dict[str, str] = {}  # local name -> module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                aliases[alias.asname or top] = alias.name if alias.asname else top
                if _MODULES.get(top):
                    yield node, str(_MODULES[top])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            if _MODULES.get(top):
                yield node, str(_MODULES[top])
            for alias in node.names:
                rule = _ATTRS.get((top, alias.name))
                if rule:
                    yield node, rule
    for node in ast.walk(tree):
        capability = _capability(node, aliases)
        if capability:
            yield node, capability
        if isinstance(node, ast.Attribute):
            head = _dotted(node.value)
            module = aliases.get(head.split(".")[0], head.split(".")[0]) if head else ""
            rule = _ATTRS.get((module, node.attr))
            if rule:
                yield node, rule
            elif node.attr in _FRAME_ATTRS:
                yield node, "frame access"
        elif isinstance(node, ast.Name) and node.id in _NAMES:
            yield node, _NAMES[node.id]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _token(node.value):
            rule = next((r for s, r in _STRINGS.items() if s in node.value), None)
            if rule:
                yield node, rule
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("pytest_"):
            yield node, "pytest/pluggy internals"
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in DUNDERS:
            yield node, f"comparison method {node.name}"
        elif isinstance(node, ast.Name) and node.id in DUNDERS and isinstance(node.ctx, ast.Store):
            yield node, f"comparison method {node.id}"
        elif isinstance(node, ast.Constant) and node.value in DUNDERS:
            yield node, f"comparison method {node.value}"


def scan_source(path: str, text: str, lines: set[int]) -> list[Hit]:
    """Hits of `text` that touch one of `lines`. A file that does not parse has none: the
    tests that import it fail on their own."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    source = text.split("\n")
    hits = set()
    for node, rule in _nodes(tree):
        first = getattr(node, "lineno", 0)
        last = getattr(node, "end_lineno", None) or first
        if rule.startswith("comparison method"):
            last = first  # defining one is the act: a body filled in under a kept `def` is not
        touched = sorted(n for n in range(first, last + 1) if n in lines)
        if touched:
            anchor = source[first - 1].strip()[:120]
            hits.add(Hit(path, touched[0], rule, source[touched[0] - 1].strip()[:120], anchor))
    return sorted(hits, key=lambda h: (h.path, h.line, h.rule))


@dataclass(frozen=True)
class Scan:
    hits: list[Hit]
    watch: dict[str, list[int]]  # path in the composed workspace -> its new lines


def shadows(rel: str, tree: Mapping[str, bytes]) -> str | None:
    """The module `rel` would stand in for, when it is named like a standard or grader module
    and can be top-level (no `__init__.py` beside it, so a path entry can make it one)."""
    parts = rel.split("/")
    if parts[-1] == "__init__.py" and len(parts) > 1:
        name, parent = parts[-2], parts[:-2]
    elif parts[-1].endswith(".py"):
        name, parent = parts[-1][:-3], parts[:-1]
    else:
        return None
    if name not in STDLIB | GRADER_MODULES:
        return None
    return None if parent and "/".join([*parent, "__init__.py"]) in tree else name


def _reference_hits(reference: Mapping[str, bytes]) -> set[tuple[str, str, str]]:
    """(path, rule, line) of every hit the reference itself has: code the task's own solution
    has is never refused."""
    out = set()
    for rel, data in reference.items():
        if rel.endswith(".py"):
            text = data.decode("utf-8", errors="replace")
            lines = set(range(1, text.count("\n") + 2))
            out |= {(h.path, h.rule, h.anchor) for h in scan_source(rel, text, lines)}
    return out


@dataclass(frozen=True)
class Scope:
    """What the task names (issue 56): the files the reference changes, the modules it imports.
    Honest work stays inside them; an attack on the grader needs what lies outside."""

    files: frozenset[str]  # the files the reference changes from the start state
    dirs: frozenset[str]  # their folders: where a new file is a helper
    imports: frozenset[str]  # top-level modules the reference imports anywhere, and the project's

    @classmethod
    def of(cls, reference: Mapping[str, bytes], start: Mapping[str, bytes]) -> Scope:
        changed = {rel for rel, data in reference.items() if rel.endswith(".py") and start.get(rel) != data}
        imports = {"__future__"} | _own_modules({**start, **reference})
        for data in (reference[rel] for rel in reference if rel.endswith(".py")):
            imports |= {module for _, module in _import_lines(data.decode("utf-8", errors="replace"))}
        return cls(frozenset(changed), frozenset(f.rpartition("/")[0] for f in changed), frozenset(imports))

    def outside(self, rel: str, text: str, lines: set[int], start: Mapping[str, bytes]) -> list[Hit]:
        """A changed file the task does not name (a new one beside a named file is a helper),
        and imports of modules the reference never imports, on the new lines."""
        if rel not in self.files and (rel in start or rel.rpartition("/")[0] not in self.dirs):
            return [Hit(rel, 0, "outside the task's files", "the reference changes only " + _few(self.files))]
        hits = []
        for line, module in _import_lines(text):
            if line in lines and module not in self.imports:
                hits.append(Hit(rel, line, "import the reference does not use", module, module))
        return hits


def _own_modules(tree: Mapping[str, bytes]) -> set[str]:
    """The project's own top-level modules and packages (what its files can import)."""
    return {rel.split("/")[0].removesuffix(".py") for rel in tree if rel.endswith(".py")}


def _import_lines(text: str) -> list[tuple[int, str]]:
    """(line, top-level module) of each absolute import."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def _few(files: frozenset[str]) -> str:
    names = sorted(files)
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def scan_submission(
    level: int,
    submitted: Mapping[str, bytes],
    start: Mapping[str, bytes],
    replaced: set[str],
    reference: Mapping[str, bytes] | None = None,
) -> Scan:
    """`submitted`: the submission's files; `start`: the start state's (level 1: the worker's
    workspace; level 2: the stripped tree the grader composes onto); `replaced`: paths the
    grader removes or restores from the reference (they never run as submitted);
    `reference`: the task's solution (what it has is allowed; with it, the submission is held
    to the files it changes and the modules it imports: `Scope`)."""
    hits: list[Hit] = []
    watch: dict[str, list[int]] = {}
    tree = {**start, **submitted}
    scope = Scope.of(reference, start) if reference else None
    for rel, data in sorted(submitted.items()):
        if rel in replaced:
            continue
        if rel.endswith(_OPAQUE) and start.get(rel) != data:
            hits.append(Hit(rel, 0, "unreadable module", "compiled or path-hook file: cannot be read"))
            continue
        if not rel.endswith(".py"):
            continue
        shadow = shadows(rel, tree) if rel not in start else None
        if shadow:
            hits.append(Hit(rel, 0, "shadows a standard or grader module", shadow))
        text = data.decode("utf-8", errors="replace")
        before = start.get(rel)
        old = before.decode("utf-8", errors="replace") if before is not None else None
        lines = new_lines(old, text)
        if not lines:
            continue
        found = scan_source(rel, text, lines)
        if scope is not None:
            found += scope.outside(rel, text, lines, start)
        if found and reference and rel in reference:
            allowed = _reference_hits({rel: reference[rel]})
            used = {rule for _, rule, _ in allowed if rule in CAPABILITIES}  # anywhere in the file
            found = [h for h in found if (h.path, h.rule, h.anchor) not in allowed and h.rule not in used]
        hits += found
        offset = (old + SEPARATOR).count("\n") if level == 2 and old is not None else 0
        watch[rel] = sorted(n + offset for n in lines)
    return Scan(hits, watch)
