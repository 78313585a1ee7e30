"""The tested objects of an F2P test file, by rules (no model).

An object is a top-level function or class of a project module (not a test utility: nothing
under a tests directory, nothing in a conftest) that the test file imports and uses. Of
those, the ones in a module named like the test file (`test_slug.py` -> `slug`, or an
object named so) are taken; when none is, the ones used inside assertions
(`assert`, `with pytest.raises`); when none is, every one used.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from taskfoundry.assets.feature.feature_compose import TEST_DIRS as _TEST_DIRS
from taskfoundry.kinds.feature.env import is_test_file

TEST_DIRS = set(_TEST_DIRS)  # one list, in the compose asset that applies it in the container


@dataclass(frozen=True)
class ObjectRef:
    module: str  # dotted: featlib.slug
    name: str  # top-level name in that module
    file: str  # relative path of the module's file
    kind: str  # function / class

    @property
    def key(self) -> str:
        return f"{self.module}:{self.name}"


class Project:
    """The repository's importable modules: dotted name -> relative file."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.modules: dict[str, str] = {}
        for root in (repo, repo / "src"):
            if not root.is_dir():
                continue
            for path in sorted(root.rglob("*.py")):
                rel_root = path.relative_to(root)
                parts = rel_root.parts
                if (
                    TEST_DIRS.intersection(parts[:-1])
                    or is_test_file(parts[-1])
                    or parts[-1] == "conftest.py"
                ):
                    continue
                if len(parts) > 1 and not all(
                    (root.joinpath(*parts[:i]) / "__init__.py").exists() for i in range(1, len(parts))
                ):
                    continue  # not inside a package chain
                if root == repo and parts[0] in ("setup.py", "src", "docs", "doc", "examples", "benchmarks"):
                    continue
                dotted = ".".join(parts).removesuffix(".py").removesuffix(".__init__")
                self.modules.setdefault(dotted, path.relative_to(repo).as_posix())
        self.tops = {m.split(".")[0] for m in self.modules}

    def is_module(self, dotted: str) -> bool:
        return dotted in self.modules

    def resolve(self, module: str, name: str, depth: int = 0) -> ObjectRef | None:
        """The definition `module.name` refers to, following re-exports a few levels."""
        file = self.modules.get(module)
        if file is None or depth > 4:
            return None
        try:
            tree = ast.parse((self.repo / file).read_text(errors="replace"))
        except SyntaxError:
            return None
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                return ObjectRef(module, name, file, "function")
            if isinstance(node, ast.ClassDef) and node.name == name:
                return ObjectRef(module, name, file, "class")
        stars = []
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                source = _absolute(module, file, node)
                for alias in node.names:
                    if (alias.asname or alias.name) == name and source:
                        return self.resolve(source, alias.name, depth + 1)
                    if alias.name == "*" and source:
                        stars.append(source)
        for source in stars:  # `from .more import *` in a package's __init__
            found = self.resolve(source, name, depth + 1)
            if found is not None:
                return found
        return None


def _absolute(module: str, file: str, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module
    package = module.split(".") if file.endswith("__init__.py") else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
    return ".".join([*base, *([node.module] if node.module else [])]) or None


@dataclass
class _Use:
    ref: ObjectRef
    in_assert: bool


def tested_objects(project: Project, test_file: str) -> list[ObjectRef]:
    """The file's tested top-level objects by the rules above (sorted, unique)."""
    try:
        tree = ast.parse((project.repo / test_file).read_text(errors="replace"))
    except SyntaxError:
        return []
    names = _imported(project, tree)
    uses = _uses(project, tree, names)
    if not uses:
        return []
    stem = Path(test_file).stem.removeprefix("test_").removesuffix("_test").lower()
    named = [u.ref for u in uses if _named_like(u.ref, stem)]
    asserted = [u.ref for u in uses if u.in_assert]
    chosen = named or asserted or [u.ref for u in uses]
    return sorted(set(chosen), key=lambda r: (r.file, r.name))


def _named_like(ref: ObjectRef, stem: str) -> bool:
    last = ref.module.rsplit(".", 1)[-1].lower()
    flat = ref.name.lower()
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in ref.name).lstrip("_")
    return stem in (last, flat, snake) or (len(stem) > 3 and (last.startswith(stem) or stem.startswith(last)))


Bound = tuple[str, str]  # ("module", dotted) or ("object", "module:name")


def _imported(project: Project, tree: ast.Module) -> dict[str, Bound]:
    names: dict[str, Bound] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] not in project.tops:
                continue
            for alias in node.names:
                local = alias.asname or alias.name
                sub = f"{node.module}.{alias.name}"
                names[local] = (
                    ("module", sub) if project.is_module(sub) else ("object", f"{node.module}:{alias.name}")
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in project.tops:
                    continue
                if alias.asname:
                    names[alias.asname] = ("module", alias.name)
                else:
                    top = alias.name.split(".")[0]
                    names[top] = ("module", top)
    return names


def _uses(project: Project, tree: ast.Module, names: dict[str, Bound]) -> list[_Use]:
    asserted: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            asserted.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.With | ast.AsyncWith) and any(
            "raises" in ast.unparse(i.context_expr) for i in node.items
        ):
            for stmt in node.body:
                asserted.update(id(n) for n in ast.walk(stmt))
    uses: list[_Use] = []
    for node in ast.walk(tree):
        ref = _ref_of(project, node, names)
        if ref is not None:
            uses.append(_Use(ref, id(node) in asserted))
    return uses


def _ref_of(project: Project, node: ast.AST, names: dict[str, Bound]) -> ObjectRef | None:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
        kind, value = names[node.id]
        if kind == "object":
            module, _, name = value.partition(":")
            return project.resolve(module, name)
        return None
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        chain: list[str] = [node.attr]
        base: ast.expr = node.value
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and names.get(base.id, ("", ""))[0] == "module"):
            return None
        module = names[base.id][1]
        for part in chain[:-1]:
            if not project.is_module(f"{module}.{part}"):
                return None
            module = f"{module}.{part}"
        return project.resolve(module, chain[-1])
    return None
