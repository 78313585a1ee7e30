"""The lint stage: the assertion linter over a branch; HIGH findings drop their test, and a
recall assertion marks its test for the filter (out of the resolve metric by default)."""

from __future__ import annotations

from datetime import UTC, datetime

from taskfoundry.kinds.program.results import GenerateStage, LintStage
from taskfoundry.linters import lint_paths
from taskfoundry.models import DropRecord
from taskfoundry.naming import junit_name


def lint_stage(gen: GenerateStage) -> LintStage:
    result = lint_paths([gen.suite / "eval" / "tests"])
    now = datetime.now(UTC)
    dropped: dict[str, list[DropRecord]] = {}
    for finding in result.findings:
        if finding.severity != "HIGH":
            continue
        dropped.setdefault(junit_name(finding.path, finding.test), []).append(
            DropRecord(id="lint_high", timestamp=now, detail=f"{finding.rule}: {finding.message}")
        )
    recall: dict[str, list[DropRecord]] = {}
    for item in result.assertions:
        if item.class_ == "recall":
            recall.setdefault(junit_name(item.path, item.test), []).append(
                DropRecord(id="recall", timestamp=now, detail=f"line {item.line}: {item.reason}")
            )
    high = sum(f.severity == "HIGH" for f in result.findings)
    return LintStage(
        dropped=dropped, findings=len(result.findings), high=high, report=result.to_json(), recall=recall
    )
