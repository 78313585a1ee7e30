"""Grade one branch from its JUnit XML and the exit code of `eval/run.sh`, never from output.

The report is read by the harness (`harness.report.read_report`, shared with the filter).
Expected tests absent from the report are `not_run`.
"""

from __future__ import annotations

import logging

from taskfoundry.grading.junit import ReportError, TestOutcome, read_report
from taskfoundry.grading.models import EvaluationResult, Status, TestResult
from taskfoundry.grading.steps import Outcome

log = logging.getLogger(__name__)


def inject_not_run(result: EvaluationResult, branch: str, expected: list[str], error_code: str) -> None:
    """Every expected test of `branch` without a result yet becomes `not_run`."""
    have = {t.name for t in result.test_results if t.branch == branch}
    result.test_results.extend(
        TestResult(name=n, branch=branch, status="not_run", extra={"error_code": error_code})
        for n in expected
        if n not in have
    )


def grade_branch(
    result: EvaluationResult,
    branch: str,
    expected: list[str],
    known: set[str],
    run: Outcome,
    xml: bytes | None,
) -> None:
    """Add the branch's test results (and branch errors) to `result`."""
    try:
        report = read_report(run, xml)
    except ReportError as exc:
        result.add_branch_error(branch, exc.code, exc.details)
        inject_not_run(result, branch, expected, exc.code)
        return
    result.warnings += [f"branch {branch}: {w}" for w in report.warnings]
    for code, details in report.errors:
        result.add_branch_error(branch, code, details)
    for name, outcome in report.outcomes.items():
        extra = {"message": outcome.message} if outcome.message else {}
        result.test_results.append(TestResult(name=name, branch=branch, status=_status(outcome), extra=extra))
    inject_not_run(result, branch, expected, "missing_from_junit_xml")
    unexpected = sorted(set(report.outcomes) - known)
    if unexpected:
        result.warnings.append(
            f"branch {branch}: {len(unexpected)} test(s) in the JUnit XML are "
            f"not in tests.json, e.g. {unexpected[:3]}"
        )


_STATUS: dict[str, Status] = {
    "passed": "passed",
    "skipped": "skipped",
    "failure": "failure",
    "error": "error",
}


def _status(outcome: TestOutcome) -> Status:
    return _STATUS.get(outcome.status, "system_error")
