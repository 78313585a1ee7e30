"""Figures of the package's import graph, for this tree or another checkout's:

    .venv/bin/python benchmarks/import_graph.py [--package DIR]

modules and arrows (every import statement, lazy ones too), cycles between modules, floors
(the longest chain of imports: a module stands a floor above all it imports),
folders that import each other (an arrow of such a pair runs back up), the arrows the layer
table of tests/test_import_graph.py forbids (on an older tree, modules whose folders the
table does not name count as core), and the biggest files.
"""

from __future__ import annotations

import argparse
import graphlib
import importlib.util
from pathlib import Path
from types import ModuleType

from taskfoundry.flows.codegraph import import_graph

ROOT = Path(__file__).resolve().parents[1]


def layer_table() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layer_table", ROOT / "tests" / "test_import_graph.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def floors(graph: dict[str, frozenset[str]]) -> int:
    """The longest import chain, in modules (0 when the graph has a cycle)."""
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError:
        return 0
    height: dict[str, int] = {}
    for module in order:  # what a module imports comes before it
        height[module] = 1 + max((height[t] for t in graph.get(module, ())), default=0)
    return max(height.values())


def folder(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "taskfoundry"
    if parts[0] == "kinds" and len(parts) > 2:
        return ".".join(parts[:2])
    return parts[0]  # a top-level module is a room of its own


def folder_pairs(graph: dict[str, frozenset[str]]) -> list[tuple[str, str]]:
    """Folders that import each other, each pair once."""
    edges = {(folder(a), folder(b)) for a, targets in graph.items() for b in targets}
    edges = {(a, b) for a, b in edges if a != b}
    return sorted((a, b) for a, b in edges if (b, a) in edges and a < b)


def cycles(graph: dict[str, frozenset[str]]) -> int:
    found = layer_table().find_cycles({k: set(v) for k, v in graph.items()})
    return len(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--package", type=Path, default=ROOT / "taskfoundry")
    args = parser.parse_args()
    graph = dict(import_graph(args.package))
    table = layer_table()
    broken = len(table.violations(graph))
    every = sorted(args.package.rglob("*.py"))  # the container scripts too
    sizes = sorted(
        ((len(p.read_text().splitlines()), p.relative_to(args.package)) for p in every), reverse=True
    )
    rows = [
        ("modules", len(graph)),
        ("arrows", sum(len(t) for t in graph.values())),
        ("cycles", cycles(graph)),
        ("floors", floors(graph)),
        ("folders importing each other", ", ".join(f"{a}<->{b}" for a, b in folder_pairs(graph)) or "none"),
        ("arrows the layer table forbids", broken),
        ("biggest files", ", ".join(f"{n} ({lines})" for lines, n in sizes[:3])),
    ]
    print(f"| {args.package} | |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
