"""What the linter reports: findings, per-assertion triage, and per-file errors."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["HIGH", "MED", "LOW"]
TriageClass = Literal["self-consistent", "observable", "contract", "recall", "pinned"]

SEVERITY_ORDER: dict[str, int] = {"HIGH": 0, "MED": 1, "LOW": 2}
TRIAGE_CLASSES: tuple[str, ...] = ("self-consistent", "observable", "contract", "recall", "pinned")


class Finding(BaseModel):
    """One rule violated by one test."""

    model_config = ConfigDict(frozen=True)

    path: str
    test: str = Field(description="test function name; `Class::method` inside a class")
    line: int
    rule: str
    severity: Severity
    message: str


class AllowedFinding(Finding):
    """A finding suppressed by a configured allowance, kept with the allowance's reason."""

    reason: str


class AssertionTriage(BaseModel):
    """How a solver without the source could obtain the value one assertion expects."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True)

    path: str
    test: str
    line: int
    class_: TriageClass = Field(alias="class")
    reason: str


class LintError(BaseModel):
    """A file that could not be read or parsed; the other files are still linted."""

    model_config = ConfigDict(frozen=True)

    path: str
    message: str


class LintResult(BaseModel):
    """Everything one lint run found, over one source or many files."""

    findings: list[Finding] = Field(default_factory=list)
    assertions: list[AssertionTriage] = Field(default_factory=list)
    errors: list[LintError] = Field(default_factory=list)
    allowed: list[AllowedFinding] = Field(default_factory=list)
    tests: list[str] = Field(default_factory=list, description="`path::test` of every test linted, in order")
    suites: dict[str, int] = Field(
        default_factory=dict, description="tests of each kind: output (of a program) or unit"
    )

    def high_tests(self) -> set[str]:
        """Names of the tests with at least one HIGH finding."""
        return {f.test for f in self.findings if f.severity == "HIGH"}

    def has_high(self) -> bool:
        """Whether any test has a HIGH finding."""
        return any(f.severity == "HIGH" for f in self.findings)

    def extend(self, other: LintResult) -> None:
        """Append another result (e.g. of the next file) to this one."""
        self.findings.extend(other.findings)
        self.assertions.extend(other.assertions)
        self.errors.extend(other.errors)
        self.allowed.extend(other.allowed)
        self.tests.extend(other.tests)
        for kind, n in other.suites.items():
            self.suites[kind] = self.suites.get(kind, 0) + n

    def triage_counts(self) -> dict[str, int]:
        """Number of assertions in each triage class (every class present, zero or not)."""
        counts = dict.fromkeys(TRIAGE_CLASSES, 0)
        for item in self.assertions:
            counts[item.class_] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON-ready object: findings, assertions, errors, allowed."""
        return {
            "findings": [f.model_dump(mode="json") for f in self.findings],
            "assertions": [a.model_dump(mode="json", by_alias=True) for a in self.assertions],
            "errors": [e.model_dump(mode="json") for e in self.errors],
            "allowed": [a.model_dump(mode="json") for a in self.allowed],
            "suites": dict(self.suites),
        }
