"""Readable text rendering of a LintResult, grouped by file and test."""

from __future__ import annotations

from collections import defaultdict

from taskfoundry.linters.models import SEVERITY_ORDER, AssertionTriage, Finding, LintResult


def _group(
    result: LintResult,
) -> dict[tuple[str, str], tuple[list[Finding], list[AssertionTriage]]]:
    groups: dict[tuple[str, str], tuple[list[Finding], list[AssertionTriage]]] = defaultdict(lambda: ([], []))
    for key in result.tests:
        path, _, test = key.partition("::")
        groups[(path, test)]  # keep the order tests were linted in
    for finding in result.findings:
        groups[(finding.path, finding.test)][0].append(finding)
    for item in result.assertions:
        groups[(item.path, item.test)][1].append(item)
    return groups


def _test_block(path: str, test: str, findings: list[Finding], triage: list[AssertionTriage]) -> list[str]:
    severities = sorted({f.severity for f in findings}, key=SEVERITY_ORDER.__getitem__)
    status = ", ".join(severities) or "ok"
    lines = [f"{path}::{test}  [{status}]"]
    for f in findings:
        lines.append(f"  {f.severity:<4} {f.rule} (line {f.line}): {f.message}")
    for item in triage:
        lines.append(f"  line {item.line}: {item.class_} - {item.reason}")
    return lines


def _summary(result: LintResult) -> str:
    severities = {s: sum(1 for f in result.findings if f.severity == s) for s in ("HIGH", "MED", "LOW")}
    counts = ", ".join(f"{k} {v}" for k, v in result.triage_counts().items())
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(result.suites.items())) or "none"
    return (
        f"suite: {kinds} tests (output: they run a program, read with every rule; unit: they call "
        "code, read without the rules for program output)\n"
        f"{len(result.tests)} tests, {len(result.high_tests())} with HIGH findings; findings: "
        f"HIGH {severities['HIGH']}, MED {severities['MED']}, LOW {severities['LOW']}; "
        f"allowed {len(result.allowed)}; errors {len(result.errors)}; assertions: {counts}"
    )


def render_text(result: LintResult) -> str:
    """The report as text: each test with its findings and triaged assertions, then a summary."""
    lines: list[str] = []
    for error in result.errors:
        lines.append(f"ERROR {error.path}: {error.message}")
    for (path, test), (findings, triage) in _group(result).items():
        lines.extend(_test_block(path, test, findings, triage))
    for allowed in result.allowed:
        lines.append(
            f"allowed: {allowed.path}::{allowed.test} {allowed.rule} (line {allowed.line}) - {allowed.reason}"
        )
    lines.append(_summary(result))
    return "\n".join(lines)
