"""What the program kind's stages hand to the next: plain pydantic models, persisted by Prefect."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.kinds.program.cleanroom.reports import AssetReport, IntegrityReport, LeakReport
from taskfoundry.kinds.program.mutate.models import MutationReport
from taskfoundry.models import CoverageReport, DropRecord
from taskfoundry.pipeline.results import Outside


class CleanroomStage(BaseModel):
    image: str
    built: bool
    usage: dict[str, str]
    leak: LeakReport
    assets: AssetReport = Field(default_factory=AssetReport, description="test assets kept, dropped")
    integrity: IntegrityReport | None = Field(None, description="the worker's attacks on the gold")

    def outside(self) -> Outside:
        return Outside(images=(self.image,))


class GenerateStage(BaseModel):
    branch: str
    suite: Path  # holds eval/run.sh and eval/tests/
    tests: list[str]  # JUnit names
    generated: int
    probes_run: int
    exhausted: str | None
    coverage: CoverageReport
    per_test_lines: dict[str, dict[str, list[int]]] = Field(default_factory=dict)
    explorer_seconds: float = 0.0

    def outside(self) -> Outside:
        return Outside(dirs=(self.suite / "eval" / "tests",))


class LintStage(BaseModel):
    dropped: dict[str, list[DropRecord]]
    findings: int
    high: int
    report: dict[str, object]


class FilterStage(BaseModel):
    kept: list[str]
    dropped: dict[str, list[DropRecord]]
    dummy_pass_rate: float
    coverage: CoverageReport
    branch_error: str | None = None  # set when infrastructure failed: the branch is marked
    mutation: MutationReport | None = None  # set by the mutation stage (None: not analysed)
