"""The package's import graph: no cycle, and no arrow the layer table forbids. Every import
statement counts, lazy ones too.

A cycle hidden behind a function-level import still ties two modules together (neither
can be understood, tested or moved alone), so the graph is built from the source with
`ast`, not from what Python happened to import.

The layer table (`LAYERS`, top to bottom) is the architecture: a module may import its own
layer and the layers below it, never one above; besides, a kind never imports another kind,
only the seam (`kinds.base`, `kinds.registry`) is imported from above the kinds, except the
kinds' `settings` modules, which `config.py` and `sections.py` compose; and the core imports
nothing of the package but the core, and of the world the standard library and `CORE_THIRD_PARTY`.
"""

from __future__ import annotations

import ast
import graphlib
import sys
from pathlib import Path

import pytest

from taskfoundry.flows.codegraph import closure, import_graph, imports_of, module_files


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


# --- the layer table --------------------------------------------------------------------

# top to bottom; a module belongs to the layer of its longest matching prefix
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "face",
        (
            "cli",
            "cli_server",
            "cli_progress",
            "runlog",
            "catalog.cli",
            "evaluate.cli",
            "discover.cli",
            "solve.cli",
        ),
    ),
    ("orchestration", ("flows", "evaluate", "solve")),
    ("catalog", ("catalog",)),
    ("config", ("config", "sections")),
    ("kinds", ("kinds.program", "kinds.function", "kinds.feature")),
    # what every kind implements (kinds.base) and how one is chosen by name (kinds.registry,
    # by dotted name: no import arrow up to the kinds)
    ("seam", ("kinds", "kinds.base", "kinds.registry")),
    ("shared stages", ("pipeline",)),
    ("libraries", ("builders", "sources", "linters", "mutation", "syntax", "discover")),
    # the harness and the evaluator's library: below every stage that runs a suite
    ("grading", ("grading",)),
    ("base libraries", ("sandbox", "images", "agent")),
    ("core", ("", "naming", "errors", "models", "store", "atomic", "layout", "dotted", "assets", "progress")),
]
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
KINDS = ("kinds.program", "kinds.function", "kinds.feature")
CORE_THIRD_PARTY = {"pydantic", "yaml", "fsspec"}  # models, atomic writes of YAML, the object store


def _rel(module: str) -> str:
    return module.removeprefix("taskfoundry").removeprefix(".")


def _matches(rel: str, prefix: str) -> bool:
    return prefix == "" or rel == prefix or rel.startswith(prefix + ".")


def layer_of(module: str) -> str:
    rel = _rel(module)
    found = [(len(p), name) for name, prefixes in LAYERS for p in prefixes if _matches(rel, p)]
    return max(found)[1]


def kind_of(module: str) -> str | None:
    return next((k for k in KINDS if _matches(_rel(module), k)), None)


def forbidden(importer: str, imported: str) -> str | None:
    """Why the arrow importer -> imported breaks the table; None when it keeps it."""
    above, below = layer_of(importer), layer_of(imported)
    if RANK[below] < RANK[above]:
        return f"{above} is above {below}: an arrow back up"
    mine, theirs = kind_of(importer), kind_of(imported)
    if theirs and mine and mine != theirs:
        return "a kind imports another kind"
    if theirs and not mine and not (above == "config" and _rel(imported).endswith(".settings")):
        return "above the kinds, only the seam (and, for config, a kind's settings) is imported"
    return None


def violations(graph: dict[str, frozenset[str]]) -> list[str]:
    return sorted(
        f"{a} -> {b}: {why}" for a, targets in graph.items() for b in targets if (why := forbidden(a, b))
    )


def test_every_module_has_a_layer() -> None:
    graph = import_graph()
    assert {layer_of(m) for m in graph} == set(RANK)
    assert layer_of("taskfoundry.kinds.program.testgen.explorer") == "kinds"
    assert layer_of("taskfoundry.kinds.registry") == "seam"
    assert layer_of("taskfoundry.catalog.cli") == "face"


def test_the_layer_table_holds() -> None:
    found = violations(dict(import_graph()))
    assert not found, "arrows the layer table forbids:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("taskfoundry.kinds.base", "taskfoundry.grading.models"),  # down: kept
        ("taskfoundry.config", "taskfoundry.kinds.program.settings"),  # config composes settings
        ("taskfoundry.kinds.function.gate", "taskfoundry.mutation.operators"),
    ],
)
def test_the_table_keeps_arrows_down(importer: str, imported: str) -> None:
    assert forbidden(importer, imported) is None


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("taskfoundry.grading.task", "taskfoundry.kinds.base"),  # back up
        ("taskfoundry.kinds.program.package", "taskfoundry.config"),  # a kind reads the whole Config
        ("taskfoundry.kinds.feature.package", "taskfoundry.kinds.program.package"),  # kind -> kind
        ("taskfoundry.flows.build", "taskfoundry.kinds.program.kind"),  # past the seam
        ("taskfoundry.catalog.images", "taskfoundry.kinds.program.package"),
        ("taskfoundry.mutation.operators", "taskfoundry.kinds.program.cleanroom.shingles"),
        ("taskfoundry.naming", "taskfoundry.sandbox.docker"),  # the core leans on a library
    ],
)
def test_the_table_forbids(importer: str, imported: str) -> None:
    """Each arrow that the renovation removed comes back as a failure."""
    assert forbidden(importer, imported)
    graph = {importer: frozenset({imported}), imported: frozenset()}
    assert violations(graph)


def _third_party(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"taskfoundry", "__future__"}


def test_the_core_needs_only_the_standard_library_and_pydantic() -> None:
    files = module_files()
    core = [m for m in files if layer_of(m) == "core"]
    assert "taskfoundry.naming" in core and "taskfoundry.dotted" in core
    extra = {m: sorted(_third_party(files[m]) - CORE_THIRD_PARTY) for m in core}
    assert not {m: e for m, e in extra.items() if e}
