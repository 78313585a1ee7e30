"""The package's import graph has no cycle: every import statement counts, lazy ones too.

A cycle hidden behind a function-level import still ties two modules together (neither
can be understood, tested or moved alone), so the graph is built from the source with
`ast`, not from what Python happened to import.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import taskfoundry

PACKAGE = Path(taskfoundry.__file__).parent
# Copied into containers and run there as scripts: not part of the import graph.
NOT_MODULES = {"taskfoundry.assets"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {
        name: path
        for name, path in found.items()
        if not any(name == skip or name.startswith(skip + ".") for skip in NOT_MODULES)
    }


def _resolve(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of the package that `name` imports anywhere in its body."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            origin = _resolve(node, name, path.name == "__init__.py")
            for alias in node.names:
                # `from pkg import mod` imports the module pkg.mod; `from mod import obj` imports mod
                sub = f"{origin}.{alias.name}"
                targets.add(sub if sub in known else origin)
    return {t for t in targets if t in known and t != name}


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle graphlib finds, breaking one edge of each until none is left."""
    graph = {node: set(edges) for node, edges in graph.items()}
    cycles: list[list[str]] = []
    while True:
        try:
            graphlib.TopologicalSorter(graph).prepare()
        except graphlib.CycleError as exc:
            cycle: list[str] = exc.args[1]
            cycles.append(cycle)
            graph[cycle[1]].discard(cycle[0])  # graphlib lists predecessors: cycle[1] imports cycle[0]
            continue
        return cycles


def test_graph_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The builder must catch what a runtime trace would miss."""
    source = "def f():\n    from taskfoundry.b import thing\n    from . import c\n"
    path = tmp_path / "a.py"
    path.write_text(source)
    known = {"taskfoundry.a", "taskfoundry.b", "taskfoundry.c"}
    assert imports_of("taskfoundry.a", path, known) == {"taskfoundry.b", "taskfoundry.c"}


def test_find_cycles_names_the_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    (cycle,) = find_cycles(graph)
    assert set(cycle) == {"a", "b", "c"}
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_graph_covers_the_package() -> None:
    graph = import_graph()
    assert "taskfoundry.pipeline.stages" in graph
    assert "taskfoundry.builders.recipe" in graph["taskfoundry.pipeline.results"]


def test_no_import_cycles() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(reversed(c)) for c in cycles)


def test_core_does_not_import_orchestration() -> None:
    """Stage code and config are usable without Prefect: nothing outside flows/ and the CLI
    imports taskfoundry.flows."""
    graph = import_graph()
    allowed = ("taskfoundry.flows", "taskfoundry.cli")
    offenders = {
        name: sorted(t for t in targets if t.startswith("taskfoundry.flows"))
        for name, targets in graph.items()
        if not name.startswith(allowed)
    }
    assert not {k: v for k, v in offenders.items() if v}
