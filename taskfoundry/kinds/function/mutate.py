"""Variants of a reference module the gate runs the cases against: trivial bodies (like the
program kind's dummies) and mutants (small changes that a suite should notice).

Mutants come from the mutation engine every kind uses (`taskfoundry.mutation.operators`:
relational, arithmetic and logical operator swaps, negations, constants, dropped statements,
early returns), restricted to the function's own bytes and spread evenly over them.
"""

from __future__ import annotations

import ast

from taskfoundry.mutation.operators import mutants_of


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return stmt
    raise ValueError(f"no function {name}")


def _span(source: bytes, fn: ast.FunctionDef) -> tuple[int, int]:
    """The function's bytes [start, end) in `source` (ast columns are UTF-8 byte offsets)."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    return starts[first - 1], starts[(fn.end_lineno or fn.lineno) - 1] + (fn.end_col_offset or 0)


def _parses(text: bytes) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def mutants(module: str, name: str, limit: int) -> dict[str, str]:
    """Up to `limit` mutant modules, label -> text, spread evenly over the function's mutants
    (those of `taskfoundry.mutation.operators`, the engine every kind mutates with)."""
    source = module.encode()
    start, end = _span(source, _function(ast.parse(module), name))
    sites = [m for m in mutants_of("module.py", source) if start <= m.start and m.end <= end]
    if not sites or limit <= 0:
        return {}
    step = max(len(sites) / limit, 1.0)
    chosen = sorted({int(k * step) for k in range(min(limit, len(sites)))})
    out = {}
    for k in chosen:
        text = sites[k].apply(source)
        if text != source and _parses(text):
            out[f"mutant{k}"] = text.decode()
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
