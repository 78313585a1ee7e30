"""The package's import graph has no cycle: every import statement counts, lazy ones too.

A cycle hidden behind a function-level import still ties two modules together (neither
can be understood, tested or moved alone), so the graph is built from the source with
`ast`, not from what Python happened to import.
"""

from __future__ import annotations

import graphlib
from pathlib import Path

from taskfoundry.flows.codegraph import closure, import_graph, imports_of


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
    assert "taskfoundry.builders.recipe" in graph["taskfoundry.pipeline.results"]
    assert "taskfoundry.assets.grading.tfrun" not in graph  # a script run in containers, not a module
    # a closure holds the packages Python runs on the way (agent/__init__ imports the loop)
    reached = closure(["taskfoundry.builders.agent"], graph)
    assert {"taskfoundry.agent", "taskfoundry.agent.loop", "taskfoundry.builders"} <= reached


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
