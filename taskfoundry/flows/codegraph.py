"""The package's own import graph, read from the source with `ast`, and hashes of code closures.

Every import statement counts, function-level ones too: a lazy import still ties two
modules together. The stage cache keys a stage on the hash of its module and every
package module it reaches, through imports or a registry's dotted paths (`code_hash`),
so editing a stage's code re-runs it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

PACKAGE = Path(__file__).parents[1]
ROOT = PACKAGE.name
# Copied into containers and run there as scripts (probe runner, leak scan, tfrun, run.sh):
# not modules of the graph, but code a stage ships: a module that names one hashes it.
ASSETS = f"{ROOT}.assets"

Graph = Mapping[str, frozenset[str]]


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name, the asset scripts left out (the accessor,
    `assets/__init__.py`, is a module)."""
    found = {module_name(p, package): p for p in sorted(package.rglob("*.py"))}
    return {n: p for n, p in found.items() if not n.startswith(ASSETS + ".")}


def _origin(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of `known` that module `name` (at `path`) imports anywhere in its body."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            origin = _origin(node, name, path.name == "__init__.py")
            for alias in node.names:
                # `from pkg import mod` imports the module pkg.mod; `from mod import obj`, mod
                sub = f"{origin}.{alias.name}"
                targets.add(sub if sub in known else origin)
    return {t for t in targets if t in known and t != name}


def import_graph(package: Path = PACKAGE) -> dict[str, frozenset[str]]:
    """Module -> the package modules it imports."""
    files = module_files(package)
    known = set(files)
    return {name: frozenset(imports_of(name, path, known)) for name, path in files.items()}


def named_modules(path: Path, known: set[str]) -> set[str]:
    """Modules a registry names by dotted path (`"pkg.mod:Class"`) and imports when chosen."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            target = node.value.partition(":")[0]
            if target in known:
                found.add(target)
    return found


def uses_graph(package: Path = PACKAGE) -> dict[str, frozenset[str]]:
    """Module -> the package modules it may run: its imports and the registry entries it names."""
    files = module_files(package)
    known = set(files)
    imports = import_graph(package)
    return {name: imports[name] | named_modules(path, known) - {name} for name, path in files.items()}


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def closure(modules: Iterable[str], graph: Graph) -> set[str]:
    """`modules`, every module they reach, and the packages Python runs to import them."""
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in graph:
            raise KeyError(f"{name} is not a module of {ROOT}")
        seen.add(name)
        todo.extend(graph[name])
        todo.extend(p for p in _parents(name) if p in graph)
    return seen


def closure_hash(modules: Iterable[str], graph: Graph, read: Callable[[str], bytes]) -> str:
    """sha256 over the source of the closure of `modules` (`read` gives a module's bytes)."""
    digest = hashlib.sha256()
    for name in sorted(closure(modules, graph)):
        digest.update(name.encode() + b"\0" + read(name) + b"\0")
    return digest.hexdigest()


@functools.cache
def _installed() -> tuple[dict[str, frozenset[str]], dict[str, Path]]:
    return uses_graph(), module_files()


def _read_installed(name: str) -> bytes:
    """A module's source, and the asset scripts it names (`"probe_runner.py"`): code it ships."""
    text = _installed()[1][name].read_bytes()
    for asset in sorted((PACKAGE / "assets").rglob("*")):
        named = (f'"{asset.name}"'.encode(), f'/{asset.name}"'.encode())
        if asset.is_file() and asset.name != "__init__.py" and any(n in text for n in named):
            text += b"\0" + asset.name.encode() + b"\0" + asset.read_bytes()
    return text


@functools.cache
def code_hash(modules: tuple[str, ...]) -> str:
    """The hash of the installed code these modules run (memoised: code does not change
    under a running process)."""
    return closure_hash(modules, _installed()[0], _read_installed)
