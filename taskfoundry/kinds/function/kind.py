"""The function kind (Code2Bench), planned: the worker gets a signature and docstring and submits
the function's module; property-based cases (inputs + expected outputs from the reference)
grade it, kept when they reach 100% branch coverage of the reference and kill a mutant.
Many tasks per source, one per accepted function. See ../shared/KINDS.md for its stages.

Its parts will be: start_state (the prompt: signature + docstring), generate (the cases),
review (self-contained / testable checks), validate (coverage, dry run, mutants), package,
grade (every case passes).
"""

from __future__ import annotations

from taskfoundry.kinds.base import NotBuiltKind


class FunctionKind(NotBuiltKind):
    name = "function"
    plan = "Code2Bench-style function tasks: a signature and docstring, graded by property-based cases"
