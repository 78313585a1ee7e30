"""Read a suite's JUnit report, trusting it only as far as the exit code of `eval/run.sh` allows.

pytest exits 0 when every test passed and 1 when some failed. A report that shows no
failure while the run did not exit 0 is not trusted: something other than pytest wrote
it, or pytest never finished. Grading never reads what a test printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase

from taskfoundry.errors import TaskfoundryError
from taskfoundry.grading.steps import Outcome

_BAD = ("failure", "error")
# exception types (the head of a JUnit message) that mean "ran out of time": the program's
# own call (tfrun's subprocess timeout) or the whole test (pytest-timeout)
_TIMEOUT_TYPES = ("subprocess.TimeoutExpired", "Failed: Timeout")


@dataclass(frozen=True)
class TestOutcome:
    __test__ = False  # not a pytest class, despite the name
    status: str  # passed / failure / error / skipped
    message: str = ""
    exception: str = ""  # the exception type JUnit names, e.g. subprocess.TimeoutExpired

    @property
    def timed_out(self) -> bool:
        return self.exception.startswith(_TIMEOUT_TYPES)


class ReportError(TaskfoundryError):
    """The report cannot grade this branch (no report, unreadable, or contradicted)."""

    def __init__(self, code: str, details: str = "") -> None:
        self.code = code
        self.details = details
        super().__init__(f"{code}: {details[:200]}")


@dataclass
class Report:
    outcomes: dict[str, TestOutcome]
    warnings: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (code, details), results still stand


@dataclass(frozen=True)
class JUnitCase:
    """One test case of a report: its JUnit id (`classname.name`), its file, its outcome."""

    junit: str
    file: str
    outcome: TestOutcome


def read_cases(xml: bytes) -> list[JUnitCase]:
    """Every case of a JUnit report (xunit1), collection errors included. The one reader of
    JUnit XML: raises (UnicodeDecodeError, SyntaxError, ValueError...) on a report that is
    not one, which `read_report` turns into a verdict."""
    report = JUnitXml.fromstring(xml.decode())
    suites = [report] if report._tag == "testsuite" else list(report)
    cases: list[JUnitCase] = []
    for suite in suites:
        for case in suite:
            if isinstance(case, TestCase):
                file = case._elem.get("file") or _file_of(case.classname or "")
                cases.append(JUnitCase(f"{case.classname}.{case.name}", file, _case_outcome(case)))
    return cases


def _file_of(classname: str) -> str:
    """A collection error has no file attribute: its classname is the module path."""
    return classname.replace(".", "/") + ".py" if classname else ""


def parse_junit(xml: bytes) -> dict[str, TestOutcome]:
    """JUnit `classname.name` -> outcome."""
    return {case.junit: case.outcome for case in read_cases(xml)}


def exception_of(message: str) -> str:
    """The exception a failure's message names (pytest-timeout's whole message: it says which
    timeout it was)."""
    return message if message.startswith("Failed: Timeout") else message.split(":", 1)[0]


def _case_outcome(case: TestCase) -> TestOutcome:
    for item in getattr(case, "result", []):
        message = item.message or ""
        text = f"{message} {item.text or ''}"[:500]
        exception = exception_of(message)
        if isinstance(item, Failure):
            return TestOutcome("failure", text, exception)
        if isinstance(item, Error):
            return TestOutcome("error", text, exception)
        if isinstance(item, Skipped):
            return TestOutcome("skipped", text)
    return TestOutcome("passed")


def read_report(run: Outcome, xml: bytes | None) -> Report:
    """The report's outcomes; ReportError when it cannot be used to grade."""
    if run.timed_out:
        raise ReportError("tests_timeout", run.output[-2000:])
    if xml is None:
        raise ReportError("no_results_xml", f"exit {run.returncode}\n{run.output[-2000:]}")
    try:
        outcomes = parse_junit(xml)
    except (SyntaxError, ValueError, UnicodeDecodeError, AttributeError, TypeError) as exc:
        raise ReportError("results_xml_unreadable", str(exc)[:2000]) from exc
    bad = any(o.status in _BAD for o in outcomes.values())
    if run.returncode != 0 and not bad:
        raise ReportError(
            "report_exit_mismatch", f"eval/run.sh exited {run.returncode} but the report shows no failure"
        )
    report = Report(outcomes)
    if run.returncode == 0 and bad:
        report.warnings.append("eval/run.sh exited 0 but the report has failures")
    if run.returncode not in (0, 1):
        report.errors.append((f"run_tests_exit_{run.returncode}", run.output[-2000:]))
    return report
