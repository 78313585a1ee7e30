"""review of the function kind: static checks of the cases before the gate runs anything.

Drops a function whose exploration was dropped (hang, recursion, no strategy), whose cases
never reached some branch or line (the gate could only refuse it), or whose every case is
an exception (the function was never seen returning); cuts cases to the cap."""

from __future__ import annotations

from taskfoundry.kinds.function.results import CasesStage, ReviewStage


def review_stage(suite: CasesStage, max_cases: int = 500) -> ReviewStage:
    result = ReviewStage()
    for fn in suite.functions:
        if fn.drop:
            result.dropped[fn.qualname] = fn.drop
        elif fn.branches[0] < fn.branches[1] or fn.lines[0] < fn.lines[1]:
            result.dropped[fn.qualname] = "coverage_unreached"
        elif all("raises" in c.expected for c in fn.cases):
            result.dropped[fn.qualname] = "always_raises"
        elif len(fn.cases) > max_cases:
            result.capped[fn.qualname] = len(fn.cases)
    return result
