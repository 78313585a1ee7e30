"""The acceptance gate of a program task: its figures against `accept:` (settings.AcceptConfig).

A suite that runs 3% of a program grades `--help` and usage errors; the gate says so at package
time, in task.yaml's `grade`, so no one ships it as a benchmark task by mistake.
"""

from __future__ import annotations

from taskfoundry.kinds.program.filter.dummies import DUMMY_NAMES
from taskfoundry.kinds.program.settings import AcceptConfig
from taskfoundry.models import TaskGrade, TaskStats


def _pct(value: float) -> str:
    """A share as a reason says it: 0.02% is not 0.0% (avfs's suite ran 0.02% of its lines)."""
    return f"{value:.2%}" if 0 < value < 0.01 else f"{value:.1%}"


def _at_least(name: str, value: float | None, bar: float | None, pct: bool = True) -> list[str]:
    if bar is None:
        return []
    if value is None:
        return [f"{name} not measured (needs >= {bar:.0%})" if pct else f"{name} not measured"]
    if value >= bar:
        return []
    return [f"{name} {_pct(value)} < {bar:.0%}" if pct else f"{name} {value:g} < {bar:g}"]


def _at_most(name: str, value: float | None, bar: float | None) -> list[str]:
    if bar is None:
        return []
    if value is None:
        return [f"{name} not measured (needs <= {bar:.0%})"]
    return [f"{name} {_pct(value)} > {bar:.0%}"] if value > bar else []


def judge(stats: TaskStats, reference_graded: bool, dummies: list[str], gate: AcceptConfig) -> TaskGrade:
    """The task's grade: every bar of `gate` it misses, with its figure. `reference_graded`: the
    reference submission was graded before packaging (it then passes every kept test: the tests
    it failed were dropped, and one it could not build leaves no task); `dummies`: those the
    filter ran (each kept test fails every one of them: the filter drops a test one passes)."""
    reasons = [
        *_at_least("line coverage", stats.line_rate, gate.min_line_rate),
        *_at_least("mutation score", stats.mutation_score, gate.min_mutation_score),
        *_at_least("kept tests", stats.tests_kept, gate.min_tests, pct=False),
        *_at_most("replay pass rate", stats.replay_pass_rate, gate.max_replay_pass_rate),
    ]
    if gate.reference and not reference_graded:
        reasons.append("reference not graded (filter.grade_reference is off)")
    missing = sorted(set(DUMMY_NAMES) - set(dummies))
    if gate.dummies and missing:
        reasons.append(f"dummies not run by the filter: {', '.join(missing)}")
    return TaskGrade(benchmark_grade=not reasons, reasons=reasons)
