"""Which mutants to analyse, and which tests can kill each: from per-test line coverage."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taskfoundry.mutation.operators import Mutant, language_of, mutants_of

log = logging.getLogger(__name__)
PerTestLines = Mapping[str, Mapping[str, list[int]]]  # JUnit name -> file -> covered lines


@dataclass(frozen=True)
class Planned:
    mutant: Mutant
    tests: tuple[str, ...]  # kept tests that reach the mutant's line, in suite order


def tests_by_line(kept: list[str], per_test_lines: PerTestLines) -> dict[str, dict[int, list[str]]]:
    by_line: dict[str, dict[int, list[str]]] = {}
    for test in kept:
        for file, lines in per_test_lines.get(test, {}).items():
            lines_of = by_line.setdefault(file, {})
            for line in lines:
                lines_of.setdefault(line, []).append(test)
    return by_line


def candidates(
    repo: Path, by_line: Mapping[str, Mapping[int, list[str]]], operators: tuple[str, ...]
) -> list[Mutant]:
    """Every mutant on a line some kept test covers, in file and source order."""
    found: list[Mutant] = []
    for file in sorted(by_line):
        path = source_path(repo, file)
        if language_of(file) is None or not path.is_file():
            continue
        lines = by_line[file]
        try:
            source = path.read_bytes()
        except OSError as exc:
            log.warning("mutation: cannot read %s: %s", path, exc)
            continue
        found += [m for m in mutants_of(file, source, operators) if m.line in lines]
    return found


def plan(
    repo: Path,
    kept: list[str],
    per_test_lines: PerTestLines,
    operators: tuple[str, ...],
    budget: int,
    seed: int,
) -> tuple[list[Planned], int]:
    """A seeded sample of at most `budget` mutants, sorted by file and position (so that
    rebuilds touch one file after another), and how many there were to choose from."""
    by_line = tests_by_line(kept, per_test_lines)
    pool = candidates(repo, by_line, operators)
    chosen = consistent_sample(pool, budget, seed)
    chosen.sort(key=lambda m: (m.file, m.start, m.end, m.replacement))
    return [Planned(m, tuple(by_line[m.file][m.line])) for m in chosen], len(pool)


def consistent_sample(pool: list[Mutant], budget: int, seed: int) -> list[Mutant]:
    """The `budget` mutants whose seeded digests are smallest. A mutant is chosen or not by its
    own identity, so two builds whose suites cover nearly the same lines analyse nearly the same
    mutants and their scores compare: a `random.sample` of a pool one mutant larger is another
    sample (csvq's builds with 1,256 and 1,262 candidates shared 76 of 200, and their scores
    differed by 7 points on suites within one point of line coverage)."""
    return sorted(pool, key=lambda m: hashlib.sha256(f"{seed}:{m.id}".encode()).digest())[:budget]


def source_path(repo: Path, file: str) -> Path:
    """The tree's file that coverage names `file`. A Python package whose directory is the tree
    itself (dirsearch: `package_dir={"dirsearch": "."}`, an `__init__.py` at the root) is
    measured as its installed name, `dirsearch/lib/core/data.py` for `lib/core/data.py`: before
    this no mutant was found for it ("no kept test covers a line of first-party source")."""
    path = repo / file
    parts = Path(file).parts
    if path.is_file() or len(parts) < 2 or not (repo / "__init__.py").is_file():
        return path
    return repo.joinpath(*parts[1:])
