"""Grade one branch from its JUnit XML and the exit code of `eval/run.sh`, never from output.

pytest exits 0 when every test passed and 1 when some failed. A report that shows no
failure while the run did not exit 0 is not trusted: something other than pytest wrote
it, or pytest never finished. Expected tests absent from the report are `not_run`.
"""

from __future__ import annotations

import logging

from taskfoundry.evaluate.models import EvaluationResult, Status, TestResult
from taskfoundry.evaluate.steps import Outcome
from taskfoundry.filtering.suite_run import TestOutcome, parse_junit

log = logging.getLogger(__name__)
_BAD = ("failure", "error")


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
    outcomes = _trusted_outcomes(result, branch, run, xml)
    if outcomes is None:
        inject_not_run(result, branch, expected, result.test_branch_errors[branch][-1].error_code)
        return
    for name, outcome in outcomes.items():
        extra = {"message": outcome.message} if outcome.message else {}
        result.test_results.append(TestResult(name=name, branch=branch, status=_status(outcome), extra=extra))
    inject_not_run(result, branch, expected, "missing_from_junit_xml")
    unexpected = sorted(set(outcomes) - known)
    if unexpected:
        result.warnings.append(
            f"branch {branch}: {len(unexpected)} test(s) in the JUnit XML are "
            f"not in tests.json, e.g. {unexpected[:3]}"
        )


def _trusted_outcomes(
    result: EvaluationResult, branch: str, run: Outcome, xml: bytes | None
) -> dict[str, TestOutcome] | None:
    """The report's outcomes, or None (with a branch error recorded) when it is unusable."""
    if run.timed_out:
        result.add_branch_error(branch, "tests_timeout", run.output[-2000:])
        return None
    if xml is None:
        result.add_branch_error(branch, "no_results_xml", f"exit {run.returncode}\n{run.output[-2000:]}")
        return None
    try:
        outcomes = parse_junit(xml)
    except (SyntaxError, ValueError, UnicodeDecodeError, AttributeError, TypeError) as exc:
        result.add_branch_error(branch, "results_xml_unreadable", str(exc)[:2000])
        return None
    bad = any(o.status in _BAD for o in outcomes.values())
    if run.returncode != 0 and not bad:
        result.add_branch_error(
            branch,
            "report_exit_mismatch",
            f"eval/run.sh exited {run.returncode} but the report shows no failure",
        )
        return None
    if run.returncode == 0 and bad:
        result.warnings.append(f"branch {branch}: eval/run.sh exited 0 but the report has failures")
    if run.returncode not in (0, 1):
        result.add_branch_error(branch, f"run_tests_exit_{run.returncode}", run.output[-2000:])
    return outcomes


_STATUS: dict[str, Status] = {
    "passed": "passed",
    "skipped": "skipped",
    "failure": "failure",
    "error": "error",
}


def _status(outcome: TestOutcome) -> Status:
    return _STATUS.get(outcome.status, "system_error")
