"""One home for each rule: a second spelling of it anywhere in the package fails here.

Each check reads the source with `ast` and names the modules that spell the rule; the rule's
home is the only one allowed. Each is also run on a planted second spelling, to show it can
fail.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "taskfoundry"
Check = Callable[[ast.AST], bool]


@functools.cache  # parsed once for the seven rules (issue 57); no check edits a tree
def _modules() -> dict[str, ast.AST]:
    files = sorted(PACKAGE.rglob("*.py"))
    return {p.relative_to(PACKAGE).as_posix(): ast.parse(p.read_text()) for p in files}


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _strings(tree: ast.AST) -> Iterator[str]:
    """Every string literal but docstrings."""
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.value


# --- the checks: does this module spell the rule? ---------------------------------------


def spells_image_stem(tree: ast.AST) -> bool:
    """ProgramBench's image names: `<owner>_1776_<repo>` and the tag of its grader."""
    return any("_1776_" in s or s.lstrip(":") == "task_cleanroom_v6" for s in _strings(tree))


def _is_task_id(part: ast.expr) -> bool:
    value = part.value if isinstance(part, ast.FormattedValue) else None
    return getattr(value, "attr", None) == "task_id" or getattr(value, "id", None) in {"task_id", "source_id"}


def composes_task_id(tree: ast.AST) -> bool:
    """An f-string that builds an id from a source's task id: the id, a separator ("__", "."),
    then another value (`f"{src.task_id}__{name}"`); a message or a file name does not."""
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = node.values
            for first, sep, after in zip(parts, parts[1:], parts[2:], strict=False):
                joined = isinstance(sep, ast.Constant) and str(sep.value).startswith(("__", "."))
                if _is_task_id(first) and joined and isinstance(after, ast.FormattedValue):
                    return True
    return False


def reads_junit(tree: ast.AST) -> bool:
    """Imports a JUnit/XML reader."""
    for node in ast.walk(tree):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        if any(n.split(".")[0] in {"junitparser", "xml", "lxml"} for n in names):
            return True
    return False


_OPERATOR_TOKENS = {"<", "<=", ">", ">=", "==", "!=", "+", "-", "*", "/", "%", "&&", "||", "and", "or"}
_AST_OPERATORS = {"Lt", "LtE", "Gt", "GtE", "Eq", "NotEq", "Add", "Sub", "Mult", "Div", "Mod", "And", "Or"}


def _operator_key(key: ast.expr | None) -> bool:
    if isinstance(key, ast.Constant):
        return key.value in _OPERATOR_TOKENS
    return isinstance(key, ast.Attribute) and key.attr in _AST_OPERATORS


def defines_mutation_operators(tree: ast.AST) -> bool:
    """A table of operator swaps: a dict of three or more operators."""
    tables = (node for node in ast.walk(tree) if isinstance(node, ast.Dict))
    return any(sum(_operator_key(k) for k in node.keys) >= 3 for node in tables)


def loads_dotted_names(tree: ast.AST) -> bool:
    """Imports a module by name at run time."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in {"import_module", "__import__"}:
                return True
    return False


_LANGUAGES = {".c", ".h", ".cc", ".cpp", ".hpp", ".rs", ".go", ".py"}


def lists_source_extensions(tree: ast.AST) -> bool:
    """A literal set, tuple, list or dict of three or more source-code extensions."""
    for node in ast.walk(tree):
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if isinstance(node, (ast.Set, ast.Tuple, ast.List, ast.Dict)) and items:
            found = {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}
            if len(found & _LANGUAGES) >= 3:
                return True
    return False


def _from_file(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node))


def locates_assets(tree: ast.AST) -> bool:
    """Finds an asset by package resources, or by a path from a module's own file."""
    by_path = (
        isinstance(node.right, ast.Constant) and node.right.value == "assets" and _from_file(node.left)
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
    )
    return any("taskfoundry.assets" in s for s in _strings(tree)) or any(by_path)


# the rule, its check, and its one home (the file that may spell it)
RULES: list[tuple[str, Check, set[str]]] = [
    ("image names", spells_image_stem, {"naming.py"}),
    ("task ids", composes_task_id, {"naming.py"}),
    ("JUnit reader", reads_junit, {"grading/junit.py"}),
    ("mutation operators", defines_mutation_operators, {"mutation/operators.py"}),
    ("dotted-name loader", loads_dotted_names, {"dotted.py"}),
    ("source extensions", lists_source_extensions, {"syntax/languages.py"}),
    ("asset lookup", locates_assets, {"assets/__init__.py"}),
]
# scripts run in containers, not by the package: they cannot import its homes
CONTAINER_SCRIPTS = "assets/"


@pytest.mark.parametrize(("rule", "check", "home"), RULES, ids=[r[0] for r in RULES])
def test_one_home(rule: str, check: Check, home: set[str]) -> None:
    spelled = {
        name
        for name, tree in _modules().items()
        if check(tree) and (not name.startswith(CONTAINER_SCRIPTS) or name in home)
    }
    assert spelled == home, f"{rule} spelled outside its home {sorted(home)}: {sorted(spelled - home)}"


SECOND_SPELLINGS = {
    "image names": 'def stem(o, r):\n    return f"{o}_1776_{r}"\n',
    "task ids": 'def fid(src, q):\n    return f"{src.task_id}__{q}"\n',
    "JUnit reader": "from junitparser import JUnitXml\n",
    "mutation operators": '_SWAP = {"<": "<=", "<=": "<", "==": "!="}\n',
    "dotted-name loader": "import importlib\nkind = importlib.import_module('taskfoundry.cli')\n",
    "source extensions": 'CODE = {".c", ".h", ".rs", ".go"}\n',
    "asset lookup": 'from pathlib import Path\nASSETS = Path(__file__).parents[2] / "assets"\n',
}


@pytest.mark.parametrize(("rule", "check", "home"), RULES, ids=[r[0] for r in RULES])
def test_a_second_spelling_is_caught(rule: str, check: Check, home: set[str]) -> None:
    assert check(ast.parse(SECOND_SPELLINGS[rule])), rule
    assert not check(ast.parse("def f(x):\n    return x + 1\n")), rule
