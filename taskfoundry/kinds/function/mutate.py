"""Variants of a reference module the gate runs the cases against: trivial bodies (like the
program kind's dummies) and mutants (small changes that a suite should notice).

Mutants are this kind's own small Python-AST operators (comparison, arithmetic and boolean
operator swaps, an integer constant moved by one, a negated condition), spread evenly over
the function's mutation sites.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
_BIN: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult, ast.Mod: ast.FloorDiv,
}  # fmt: skip


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return stmt
    raise ValueError(f"no function {name}")


Edit = Callable[[ast.AST], None]


def _sites(fn: ast.FunctionDef) -> Iterator[tuple[int, Edit]]:
    """(index of the node in ast.walk order, the change to make to that node)."""
    for i, node in enumerate(ast.walk(fn)):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _CMP:

            def flip(n: ast.AST) -> None:
                assert isinstance(n, ast.Compare)
                n.ops[0] = _CMP[type(n.ops[0])]()

            yield i, flip
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _BIN:

            def swap(n: ast.AST) -> None:
                assert isinstance(n, (ast.BinOp, ast.AugAssign))
                n.op = _BIN[type(n.op)]()

            yield i, swap
        elif isinstance(node, ast.BoolOp):

            def other(n: ast.AST) -> None:
                assert isinstance(n, ast.BoolOp)
                n.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()

            yield i, other
        elif isinstance(node, ast.Constant) and type(node.value) is int:

            def bump(n: ast.AST) -> None:
                assert isinstance(n, ast.Constant) and isinstance(n.value, int)
                n.value = n.value + 1

            yield i, bump
        elif isinstance(node, (ast.If, ast.While)):

            def negate(n: ast.AST) -> None:
                assert isinstance(n, (ast.If, ast.While))
                n.test = ast.UnaryOp(op=ast.Not(), operand=n.test)

            yield i, negate


def mutants(module: str, name: str, limit: int) -> dict[str, str]:
    """Up to `limit` mutant modules, label -> text, spread over the sites."""
    tree = ast.parse(module)
    sites = list(_sites(_function(tree, name)))
    if not sites or limit <= 0:
        return {}
    step = max(len(sites) / limit, 1.0)
    chosen = sorted({int(k * step) for k in range(min(limit, len(sites)))})
    out = {}
    for k in chosen:
        index, edit = sites[k]
        mutant = copy.deepcopy(tree)
        node = list(ast.walk(_function(mutant, name)))[index]
        edit(node)
        text = ast.unparse(ast.fix_missing_locations(mutant))
        if text != ast.unparse(tree):
            out[f"mutant{k}"] = text
    return out


def trivial(module: str, name: str, first_param: str | None) -> dict[str, str]:
    """The module with the function's body replaced: return None, return the first argument,
    raise. A suite that one of these passes asserts too little."""
    bodies = {"return_none": "return None", "raise": "raise NotImplementedError"}
    if first_param:
        bodies["return_first_arg"] = f"return {first_param}"
    out = {}
    for label, body in bodies.items():
        tree = ast.parse(module)
        fn = _function(tree, name)
        fn.body = ast.parse(body).body
        out[f"trivial_{label}"] = ast.unparse(ast.fix_missing_locations(tree))
    return out
