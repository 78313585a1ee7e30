"""The lint stage: the assertion linter over a branch; HIGH findings drop their test."""

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
    high = sum(f.severity == "HIGH" for f in result.findings)
    return LintStage(dropped=dropped, findings=len(result.findings), high=high, report=result.to_json())
