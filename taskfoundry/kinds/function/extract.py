"""Stages 1-3 of the function kind, static (`ast`): functions, dependencies, testability.

Every top-level function and method of the repository's Python files (tests, docs, examples
and setup scripts left out) becomes a `FunctionRecord`. Dependencies: the names a function
reads that it does not bind itself. Builtins and the standard library: SC; names from the
allowed third-party libraries as well: WSC; a name of the project (a function, a class, a
relative import, a non-literal module value built from them): dropped. Module-level values
built only from literals and SC/WSC names (`_RE = re.compile(...)`) are copied along.
Testable: a docstring, complexity in range, no I/O, randomness, clock or global writes,
no generators, and some return value that depends on the parameters.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from taskfoundry.kinds.function.analysis import (
    complexity,
    impure_import,
    impure_reason,
    param_hints,
    raised_names,
    returns_depend_on_params,
)
from taskfoundry.kinds.function.results import Candidate, FunctionRecord

_SKIP_DIRS = {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "build", "dist"}
_ALLOWED_DECORATORS = {"lru_cache", "cache", "functools.lru_cache", "functools.cache"}
_BUILTINS = set(dir(builtins))
STDLIB = set(sys.stdlib_module_names)


def python_files(repo: Path) -> Iterator[Path]:
    for path in sorted(repo.rglob("*.py")):
        rel = path.relative_to(repo)
        parts = set(rel.parts[:-1])
        name = path.name
        if parts & _SKIP_DIRS or any(p.startswith(".") or p.endswith("venv") for p in rel.parts[:-1]):
            continue
        if name.startswith("test_") or name.endswith("_test.py") or name in {"conftest.py", "setup.py"}:
            continue
        yield path


def project_packages(repo: Path) -> set[str]:
    """Top-level names the project's own code is imported as."""
    names = set()
    for path in python_files(repo):
        rel = path.relative_to(repo).parts
        if rel[0] == "src" and len(rel) > 1:
            rel = rel[1:]
        names.add(rel[0].removesuffix(".py"))
    return names


@dataclass
class Binding:
    kind: str  # import, value, def
    node: ast.stmt
    module: str = ""  # import: the top-level module
    level: int = 0


@dataclass
class ModuleInfo:
    path: Path
    rel: str
    tree: ast.Module
    source: str
    bindings: dict[str, Binding] = field(default_factory=dict)
    earlier: dict[str, list[Binding]] = field(default_factory=dict)  # every value binding, in order
    changes: dict[str, list[ast.stmt]] = field(default_factory=dict)  # X[k] = v, X.a = v at top level
    future: bool = False


def read_module(path: Path, repo: Path) -> ModuleInfo | None:
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    info = ModuleInfo(path, path.relative_to(repo).as_posix(), tree, source)
    for stmt in _top_level(tree.body):
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            info.future = True
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                info.bindings[name] = Binding("import", stmt, alias.name.split(".")[0])
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                top = (stmt.module or "").split(".")[0]
                info.bindings[alias.asname or alias.name] = Binding("import", stmt, top, stmt.level)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            info.bindings[stmt.name] = Binding("def", stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        info.bindings[node.id] = Binding("value", stmt)
                        info.earlier.setdefault(node.id, []).append(Binding("value", stmt))
                    elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(
                        node.value, ast.Name
                    ):
                        info.changes.setdefault(node.value.id, []).append(stmt)  # X["k"] = v
    return info


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module statements, with the imports inside top-level `if` and `try` blocks
    (`if TYPE_CHECKING:`, `try: import x except ImportError:`) as well."""
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.Try)):
            inner = [*stmt.body, *stmt.orelse, *(getattr(stmt, "finalbody", []))]
            yield from (s for s in inner if isinstance(s, (ast.Import, ast.ImportFrom)))
        else:
            yield stmt


def functions(info: ModuleInfo) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """(qualname, node, is_method) for top-level functions and methods of top-level classes."""
    for stmt in info.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield stmt.name, stmt, False
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{stmt.name}.{item.name}", item, True


class NotStandalone(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def free_names(node: ast.AST) -> set[str]:
    """Names read in `node` that it does not bind (parameters, assignments, imports, defs)."""
    bound: set[str] = set()
    read: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (read if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
        elif isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
            bound.add(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name.split(".")[0]) for a in sub.names)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            bound.add(sub.name)
    return read - bound - _BUILTINS


def local_imports(node: ast.AST) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import):
            found.update((a.name.split(".")[0], 0) for a in sub.names)
        elif isinstance(sub, ast.ImportFrom):
            found.add(((sub.module or "").split(".")[0], sub.level))
    return found


@dataclass
class Closure:
    """What a standalone copy of a function needs from its module."""

    imports: dict[str, Binding] = field(default_factory=dict)  # name -> import binding
    values: list[ast.stmt] = field(default_factory=list)
    libraries: set[str] = field(default_factory=set)


def classify_module(module: str, level: int, project: set[str], allowed: set[str]) -> str:
    """ "SC", "WSC", or a drop reason."""
    if level > 0 or module in project:
        return "project_dependency"
    if module in STDLIB:
        return "SC"
    if module in allowed:
        return "WSC"
    return "third_party"


def resolve(
    node: ast.AST, info: ModuleInfo, project: set[str], allowed: set[str], closure: Closure, depth: int = 0
) -> None:
    """Fill `closure` with what `node` needs; NotStandalone when it needs the project."""
    for module, level in local_imports(node):
        verdict = classify_module(module, level, project, allowed)
        if verdict == "WSC":
            closure.libraries.add(module)
        elif verdict != "SC":
            raise NotStandalone(verdict, f"imports {'.' * level}{module}")
    own = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if isinstance(node, (ast.Assign, ast.AnnAssign)):  # a module value: what its right side reads
        names = free_names(node.value) if node.value is not None else set()
    else:
        names = free_names(node) - {own}
    for name in sorted(names):
        binding = _binding_before(info, name, node)
        if binding is None:
            raise NotStandalone("unresolved", name)
        if binding.kind == "def":
            raise NotStandalone("project_dependency", name)
        if binding.kind == "import":
            verdict = classify_module(binding.module, binding.level, project, allowed)
            if verdict == "WSC":
                closure.libraries.add(binding.module)
            elif verdict != "SC":
                raise NotStandalone(verdict, f"{name} from {'.' * binding.level}{binding.module}")
            closure.imports[name] = binding
        elif binding.node not in closure.values:
            if depth > 5:
                raise NotStandalone("project_dependency", f"{name}: nested too deep")
            resolve(binding.node, info, project, allowed, closure, depth + 1)
            closure.values.append(binding.node)
            for change in info.changes.get(name, []):  # the value as the module leaves it
                if change.lineno > binding.node.lineno and change not in closure.values:
                    resolve(change, info, project, allowed, closure, depth + 1)
                    closure.values.append(change)


def _binding_before(info: ModuleInfo, name: str, node: ast.AST) -> Binding | None:
    """The binding `node` sees: for a module value, the last one above it (`X = [f(b) for b
    in X]` reads the earlier X); for a function, the module's final one."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        above = [b for b in info.earlier.get(name, []) if b.node.lineno < node.lineno]
        if above:
            return above[-1]
    return info.bindings.get(name)


def _import_line(name: str, binding: Binding) -> str:
    stmt = binding.node
    for alias in stmt.names:  # type: ignore[attr-defined]
        if (alias.asname or alias.name.split(".")[0]) == name or alias.asname == name or alias.name == name:
            if isinstance(stmt, ast.Import):
                return f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
            assert isinstance(stmt, ast.ImportFrom)
            return f"from {stmt.module} import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
    raise AssertionError(name)


def standalone(
    info: ModuleInfo, fn: ast.FunctionDef | ast.AsyncFunctionDef, closure: Closure
) -> tuple[str, str, int, int]:
    """(module text, header, first body line, last line): the function alone with its needs."""
    lines = ["from __future__ import annotations"] if info.future else []
    lines += sorted({_import_line(n, b) for n, b in closure.imports.items()})
    order = sorted(closure.values, key=lambda s: s.lineno)
    for stmt in order:
        lines.append(ast.get_source_segment(info.source, stmt, padded=False) or ast.unparse(stmt))
    header = "\n".join(lines)
    start = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
    text_lines = info.source.splitlines()[start - 1 : fn.end_lineno]
    prefix = header + "\n\n\n" if header else ""
    offset = prefix.count("\n") + 1 - start  # module line = source line + offset
    module = prefix + "\n".join(text_lines) + "\n"
    return module, header, fn.body[0].lineno + offset, (fn.end_lineno or fn.lineno) + offset


def signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    stub = ast.FunctionDef(
        name=fn.name, args=fn.args, body=[ast.Expr(ast.Constant(...))], decorator_list=[], returns=fn.returns
    )
    stub.lineno = fn.lineno
    return ast.unparse(stub).removesuffix("\n    ...").rstrip()


def examine(
    info: ModuleInfo,
    qualname: str,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    is_method: bool,
    project: set[str],
    allowed: set[str],
    complexity_range: tuple[int, int],
) -> tuple[FunctionRecord, Candidate | None]:
    record = FunctionRecord(
        qualname=qualname,
        file=info.rel,
        lineno=fn.lineno,
        signature=signature(fn),
        docstring=ast.get_docstring(fn) or "",
        complexity=complexity(fn),
    )
    if is_method:
        return _drop(record, "method", "methods need their class"), None
    closure = Closure()
    try:
        resolve(fn, info, project, allowed, closure)
    except NotStandalone as exc:
        return _drop(record, exc.reason, exc.detail), None
    record.dep_class = "WSC" if closure.libraries else "SC"
    imported = [impure_import(b.node, n) for n, b in closure.imports.items()]
    if any(imported):
        return _drop(record, "impure", next(r for r in imported if r)), None
    record.libraries = sorted(closure.libraries)
    reason = _untestable(fn, record, complexity_range)
    if reason:
        return _drop(record, *reason), None
    module, header, body_first, last = standalone(info, fn, closure)
    params, npos = param_hints(fn)
    candidate = Candidate(
        record=record,
        module=module,
        header=header,
        params=params,
        npos=npos,
        raises=sorted(raised_names(fn)),
        body_first=body_first,
        last=last,
    )
    return record, candidate


def _untestable(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, record: FunctionRecord, bounds: tuple[int, int]
) -> tuple[str, str] | None:
    if isinstance(fn, ast.AsyncFunctionDef):
        return "async", "coroutines are not called directly"
    for deco in fn.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if ast.unparse(target) not in _ALLOWED_DECORATORS:
            return "decorated", ast.unparse(deco)
    args = fn.args
    if args.vararg or args.kwarg:
        return "varargs", "*args or **kwargs"
    if not (args.posonlyargs or args.args or args.kwonlyargs):
        return "no_params", "nothing to vary"
    if not record.docstring.strip():
        return "no_docstring", ""
    low, high = bounds
    if not low <= record.complexity <= high:
        return "complexity", f"{record.complexity} outside [{low}, {high}]"
    impure = impure_reason(fn)
    if impure:
        return "impure", impure
    if not returns_depend_on_params(fn):
        return "return_independent", "no return value depends on the parameters"
    return None


def _drop(record: FunctionRecord, reason: str, detail: str) -> FunctionRecord:
    record.drop = reason
    record.drop_detail = detail[:300]
    return record
