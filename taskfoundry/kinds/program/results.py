"""What the program kind's stages hand to the next: plain pydantic models, persisted by Prefect."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from taskfoundry.kinds.program.cleanroom.reports import AssetReport, IntegrityReport, LeakReport
from taskfoundry.kinds.program.mutate.models import MutationReport
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.models import CoverageReport, DropRecord
from taskfoundry.pipeline.results import Outside


class CleanroomStage(BaseModel):
    image: str
    built: bool
    usage: dict[str, str]
    leak: LeakReport
    assets: AssetReport = Field(default_factory=AssetReport, description="test assets kept, dropped")
    integrity: IntegrityReport | None = Field(None, description="the worker's attacks on the gold")
    docs_left_out: dict[str, str] = Field(
        default_factory=dict, description="the tree's docs not shipped, as they hold source: path -> why"
    )
    argv0: str = Field(
        WORKSPACE_EXECUTABLE,
        description="argv[0] of every call of the program: its workspace path, or a path named as "
        "the program itself where it picks what it does by that name (a multi-call binary)",
    )

    def outside(self) -> Outside:
        return Outside(images=(self.image,))


class OriginCount(BaseModel):
    """What the probes of one origin did in one generation."""

    probes: int = Field(0, description="run on the coverage build")
    kept: int = Field(0, description="written as tests")
    new_lines: int = Field(0, description="lines they reached first")


class OriginRow(OriginCount):
    """An origin's row in reports/generate.json: the explorer's counts, then what the filter
    and the mutation stage made of its tests."""

    tests_kept: int = Field(0, description="tests the filter and the guided step kept")
    kills: int = Field(0, description="mutants whose first failing test is one of these")


class HarvestReport(BaseModel):
    """What running the project's own tests with the recording shim gave (testgen.harvest)."""

    status: Literal["harvested", "no_calls", "no_tests", "off", "error"]
    command: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    calls: int = Field(0, description="calls of the program the shim recorded")
    probes: int = Field(0, description="distinct replayable calls, as probes")
    unreplayable: int = Field(0, description="calls left out: stdin never closed, or over its cap")
    seconds: float = 0.0
    detail: str = ""


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
    harvest: HarvestReport | None = None
    origins: dict[str, OriginCount] = Field(default_factory=dict, description="by origin (probes.family)")
    test_origins: dict[str, str] = Field(default_factory=dict, description="JUnit name -> its origin")
    slow_timeout: float | None = Field(
        None, description="a slow program's probe time, the explorer's (None: not slow)"
    )
    seed: int | None = Field(None, description="the generator's seed (secret: the task's reports only)")
    not_kept: dict[str, int] = Field(
        default_factory=dict,
        description="probes not kept, by why: public_like (a worker can draw it: not run, its dual "
        "runs instead), dummy_like, printer_skipped (not run: a word in it printed only --version or "
        "--help), traces",
    )
    replay: Path | None = Field(None, description="the replay dummy's table (testgen.replay)")

    def outside(self) -> Outside:
        return Outside(dirs=(self.suite / "eval" / "tests",))


class LintStage(BaseModel):
    dropped: dict[str, list[DropRecord]]
    findings: int
    high: int
    report: dict[str, object]
    recall: dict[str, list[DropRecord]] = Field(
        default_factory=dict, description="tests with a recall assertion: the filter's to drop or keep"
    )


class NoLogicReport(BaseModel):
    """reports/replay.json: what submissions a worker could write without building anything
    passed of the suite (the replay table of public probes, the version and help printers)."""

    public_probes: int = Field(0, description="public probes the replay table holds (run on the gold)")
    public_seeds: list[int] = Field(default_factory=list, description="the public seeds they were drawn with")
    pass_rate_before: dict[str, float] = Field(
        default_factory=dict, description="by dummy: share of the generated tests it passed"
    )
    replay_pass_rate_before: float | None = None
    replay_pass_rate: float | None = Field(
        None, description="share of the kept tests the replay dummy passes (null: not run)"
    )


class FilterStage(BaseModel):
    kept: list[str]
    dropped: dict[str, list[DropRecord]]
    dummy_pass_rate: float
    coverage: CoverageReport
    branch_error: str | None = None  # set when infrastructure failed: the branch is marked
    recall: list[str] = Field(default_factory=list, description="tests with a recall assertion")
    recall_in_resolve: bool = False
    mutation: MutationReport | None = None  # set by the mutation stage (None: not analysed)
    no_logic: NoLogicReport | None = None  # what no-logic submissions passed (None: not run)
