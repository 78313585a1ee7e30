"""Scores: per task the pass rate over its non-ignored tests; their means over the run."""

from __future__ import annotations

from pathlib import Path

from taskfoundry.grading.models import EvalSummary, EvaluationResult, TaskScore

INFRA_CODES = ("sandbox_error", "internal_error")


def score_task(
    task_id: str, expected: dict[str, list[str]], result: EvaluationResult, near: float
) -> TaskScore:
    """`expected`: branch key -> the `tests` list of tests.json (ignored branches left out)."""
    names = [(b, n) for b, tests in expected.items() for n in tests]
    passed = sum(result.status_of(b, n) == "passed" for b, n in names)
    rate = passed / len(names) if names else 0.0
    return TaskScore(
        task_id=task_id,
        tests=len(names),
        passed=passed,
        pass_rate=round(rate, 6),
        resolved=bool(names) and passed == len(names),
        near_resolved=bool(names) and rate >= near,
        error_code=result.error_code,
        infra_error=result.error_code in INFRA_CODES,
        tier=tier(rate, bool(names) and passed == len(names)),
    )


def tier(rate: float, resolved: bool) -> str:
    """Diagnostic tiers (as Code2Bench reports partial credit beside Pass@1): every test,
    at least 90%, at least half, some, none."""
    if resolved:
        return "all"
    return "most" if rate >= 0.9 else "half" if rate >= 0.5 else "some" if rate > 0 else "none"


def summarize(run_dir: Path, tasks_dir: Path, scores: list[TaskScore], warnings: list[str]) -> EvalSummary:
    n = len(scores)

    def mean(values: list[float]) -> float:
        return round(sum(values) / n, 6) if n else 0.0

    return EvalSummary(
        run_dir=str(run_dir),
        tasks_dir=str(tasks_dir),
        tasks=scores,
        warnings=warnings,
        mean_pass_rate=mean([s.pass_rate for s in scores]),
        resolved_rate=mean([float(s.resolved) for s in scores]),
        near_resolved_rate=mean([float(s.near_resolved) for s in scores]),
        tiers={
            t: n for t in ("all", "most", "half", "some", "none") if (n := sum(s.tier == t for s in scores))
        },
    )


def summary_text(summary: EvalSummary) -> str:
    """A plain table for the terminal."""
    width = max([len(s.task_id) for s in summary.tasks] + [4])
    lines = [f"{'task':<{width}}  {'passed':>9}  {'rate':>7}  resolved  near  error"]
    for s in summary.tasks:
        lines.append(
            f"{s.task_id:<{width}}  {f'{s.passed}/{s.tests}':>9}  {s.pass_rate:>7.1%}  "
            f"{'yes' if s.resolved else 'no':>8}  {'yes' if s.near_resolved else 'no':>4}  "
            f"{s.error_code or ''}{' (infrastructure: re-run)' if s.infra_error else ''}"
        )
    lines.append(
        f"{len(summary.tasks)} task(s): mean pass rate {summary.mean_pass_rate:.1%}, "
        f"resolved {summary.resolved_rate:.1%}, near-resolved {summary.near_resolved_rate:.1%}"
        + (f"; tiers {summary.tiers}" if summary.tiers else "")
    )
    lines += [f"warning: {w}" for w in summary.warnings]
    return "\n".join(lines)
