"""The function kind's yield table: how many functions each stage kept, and why the rest went."""

from __future__ import annotations

from collections import Counter

from taskfoundry.kinds.function.results import CasesStage, FunctionsStage, GateStage, ReviewStage, Yield

_DEPENDENCY_DROPS = {"method", "project_dependency", "third_party", "unresolved"}


def yield_table(start: FunctionsStage, suite: CasesStage, review: ReviewStage, gate: GateStage) -> Yield:
    drops: Counter[str] = Counter()
    for r in start.records:
        if r.drop:
            drops[r.drop] += 1
    for reason in review.dropped.values():
        drops[reason] += 1
    for v in gate.verdicts:
        if v.drop:
            drops[v.drop] += 1
    kept_deps = [r for r in start.records if r.drop not in _DEPENDENCY_DROPS]
    return Yield(
        candidates=len(start.records),
        dependencies=len(kept_deps),
        sc=sum(1 for r in kept_deps if r.dep_class == "SC"),
        wsc=sum(1 for r in kept_deps if r.dep_class == "WSC"),
        testable=len(start.candidates),
        explored=len(suite.functions) - len(review.dropped),
        accepted=sum(1 for v in gate.verdicts if v.accepted),
        dropped=dict(sorted(drops.items())),
    )


def yield_text(name: str, y: Yield) -> str:
    return (
        f"{name}: {y.candidates} functions -> {y.dependencies} after dependencies (SC {y.sc}, WSC {y.wsc})"
        f" -> {y.testable} testable -> {y.explored} with full-coverage cases -> {y.accepted} accepted"
    )
