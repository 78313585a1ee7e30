"""A task's difficulty, the same rule for every kind: ProgramBench §8.4, from the size of the
reference's code and the number of its runtime dependencies."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from taskfoundry.syntax.languages import MEASURED

Level = Literal["easy", "medium", "hard"]


def difficulty(code_lines: int, runtime_deps: int) -> tuple[float, Level]:
    """ProgramBench §8.4: clamp(log10(lines) + log10(1 + deps) - 2, 0, 10)."""
    score = math.log10(max(code_lines, 1)) + math.log10(1 + runtime_deps) - 2
    score = round(min(max(score, 0.0), 10.0), 3)
    return score, "easy" if score < 2 else "medium" if score < 4 else "hard"


def code_lines(repo: Path) -> int:
    total = 0
    for path in repo.rglob("*"):
        if path.suffix in MEASURED and path.is_file() and "test" not in path.name:
            total += sum(1 for line in path.read_text(errors="replace").splitlines() if line.strip())
    return total
