"""Facts about one function read off its `ast`: complexity, purity, data flow, input hints."""

from __future__ import annotations

import ast
import builtins
from typing import Any

from taskfoundry.assets.function.fcodec import Unencodable, encode
from taskfoundry.kinds.function.results import Param

FnNode = ast.FunctionDef | ast.AsyncFunctionDef

# modules whose use means I/O, randomness, the clock, the environment or concurrency
IMPURE_MODULES = {
    "random", "secrets", "uuid", "time", "os", "sys", "io", "subprocess", "socket", "shutil",
    "tempfile", "pathlib", "glob", "logging", "threading", "multiprocessing", "asyncio", "signal",
    "urllib", "http", "sqlite3", "select", "mmap", "fcntl", "ctypes", "importlib", "inspect",
    "getpass", "platform", "locale", "webbrowser", "smtplib", "ftplib", "requests", "warnings",
}  # fmt: skip
IMPURE_CALLS = {
    "open", "print", "input", "exec", "eval", "compile", "__import__", "globals", "locals", "vars",
    "breakpoint", "exit", "quit", "id", "hash",
}  # fmt: skip
# pure string functions of os.path, the one part of `os` a pure function may import
PURE_OS_PATH = {
    "join",
    "split",
    "splitext",
    "basename",
    "dirname",
    "normpath",
    "commonprefix",
    "isabs",
    "sep",
}
IMPURE_ATTRS = {"now", "today", "utcnow", "random", "urandom", "getenv", "environ", "time_ns"}


def complexity(fn: FnNode) -> int:
    """McCabe's cyclomatic complexity (as radon counts it: decisions + boolean operators + 1)."""
    score = 1
    for node in ast.walk(fn):
        if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.IfExp, ast.ExceptHandler)):
            score += 1
        elif isinstance(node, ast.BoolOp):
            score += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            score += 1 + len(node.ifs)
        elif isinstance(node, ast.match_case):
            score += 1
    return score


def impure_reason(fn: FnNode) -> str:
    """Why calling `fn` is not a pure function of its inputs ('' when nothing says so)."""
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return f"writes {'global' if isinstance(node, ast.Global) else 'nonlocal'} names"
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return "a generator or coroutine"
        if isinstance(node, ast.Name) and node.id in IMPURE_MODULES | IMPURE_CALLS:
            return f"uses {node.id}"
        if isinstance(node, ast.Attribute) and node.attr in IMPURE_ATTRS:
            return f"uses .{node.attr}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] in IMPURE_MODULES:
                    return f"imports {name}"
    return ""


def impure_import(stmt: ast.stmt, name: str) -> str:
    """Why the module-level import that binds `name` makes a function that uses it impure
    (`from random import sample`), or ''."""
    if isinstance(stmt, ast.ImportFrom):
        module = stmt.module or ""
        if module in ("os.path", "posixpath") and name in PURE_OS_PATH:
            return ""
        return f"uses {name} from {module}" if module.split(".")[0] in IMPURE_MODULES else ""
    if isinstance(stmt, ast.Import):
        return f"uses {name}" if name.split(".")[0] in IMPURE_MODULES else ""
    return ""


def _names(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def returns_depend_on_params(fn: FnNode) -> bool:
    """Some `return` value reads a name that the parameters flow into (assignments, loops,
    `with`, walrus, and `obj.method(tainted)` tainting `obj`), to a fixed point."""
    args = fn.args
    tainted = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    changed = True
    while changed:
        before = len(tainted)
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if _names(node.value) & tainted:
                    for target in targets:
                        tainted |= _names(target)
            elif isinstance(node, (ast.For, ast.comprehension)) and _names(node.iter) & tainted:
                tainted |= _names(node.target)
            elif isinstance(node, ast.withitem) and _names(node.context_expr) & tainted:
                tainted |= _names(node.optional_vars)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if any(_names(a) & tainted for a in [*node.args, *(k.value for k in node.keywords)]):
                    tainted |= _names(node.func.value)
            if isinstance(node, (ast.If, ast.While, ast.For)):
                cond = node.iter if isinstance(node, ast.For) else node.test
                if _names(cond) & tainted:  # what the branch writes depends on the parameters
                    tainted |= _written(node)
        changed = len(tainted) != before
    returns = [node for node in ast.walk(fn) if isinstance(node, ast.Return) and node.value is not None]
    if any(_names(r.value) & tainted for r in returns):
        return True
    # different values returned on different paths: the parameters choose the path
    return len({ast.unparse(r.value) for r in returns if r.value is not None}) > 1


def _written(block: ast.AST) -> set[str]:
    out = set()
    for sub in ast.walk(block):
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            out.add(sub.id)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
            out |= _names(sub.func.value)
    return out


def raised_names(fn: FnNode) -> set[str]:
    """Exception classes the function raises itself: such outcomes are cases, others are
    inputs the function was not made for."""
    found = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Raise) and node.exc is not None:
            # `raise E(...)`, `raise E`, and `raise given or ValueError(...)`: every class named
            for sub in ast.walk(node.exc):
                name = (
                    sub.id
                    if isinstance(sub, ast.Name)
                    else sub.attr
                    if isinstance(sub, ast.Attribute)
                    else ""
                )
                if name.endswith(("Error", "Exception", "Warning")) or _builtin_exception(name):
                    found.add(name)
    return found


def _builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


# what an unannotated parameter's name usually holds (when no default or literal says)
_BY_NAME = {
    "int": set("n k r i j m x y index idx size count width num number step start stop end".split())
    | set("depth length limit base".split()),
    "str": set("s text string word name prefix suffix sep char line fmt".split()),
    "list": set("iterable seq sequence items lst values data elements nums numbers arr".split()),
}
_GUESS = {int: "int", float: "float", str: "str", bool: "bool", bytes: "bytes", list: "list", dict: "dict"}


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ast


def param_hints(fn: FnNode) -> tuple[list[Param], int]:
    """The parameters in call order with annotations, guessed types and compared literals;
    and how many go by position."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    with_default = [a.arg for a in positional][len(positional) - len(args.defaults) :]
    defaults: dict[str, ast.AST] = dict(zip(with_default, args.defaults, strict=True))
    defaults |= {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None}
    literals: dict[str, list[Any]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            names = {n.id for n in operands if isinstance(n, ast.Name)}
            for operand in operands:
                value = _literal(operand)
                if value is ast or isinstance(operand, ast.Name):
                    continue
                values = list(value) if isinstance(value, (tuple, list, set, frozenset)) else [value]
                for name in names:
                    literals.setdefault(name, []).extend(values)
    params = []
    for arg in [*positional, *args.kwonlyargs]:
        found = literals.get(arg.arg, [])
        widened = found + [v + d for v in found if type(v) is int for d in (-1, 1)]
        encoded = []
        for value in widened:
            try:
                item = encode(value)
            except Unencodable:
                continue
            if item not in encoded:
                encoded.append(item)
        default = _literal(defaults[arg.arg]) if arg.arg in defaults else ast
        guess = _GUESS.get(type(default)) or next(
            (_GUESS.get(type(v)) for v in found if type(v) in _GUESS), None
        )
        guess = guess or next((kind for kind, names in _BY_NAME.items() if arg.arg.lower() in names), None)
        annotation = ast.unparse(arg.annotation) if arg.annotation else None
        params.append(Param(name=arg.arg, annotation=annotation, guess=guess, literals=encoded[:40]))
    return params, len(positional)
