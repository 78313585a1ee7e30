"""What each stage hands to the next. Plain pydantic models, so Prefect can persist them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.builders.recipe import Recipe
from taskfoundry.kinds.program.cleanroom.reports import AssetReport, IntegrityReport, LeakReport
from taskfoundry.kinds.program.mutate.models import MutationReport
from taskfoundry.models import CoverageReport, DropRecord, UpstreamInfo


@dataclass(frozen=True)
class Outside:
    """What a stage result points at outside itself: a cached result whose image or directory
    is gone since (`docker rmi`, a deleted work dir) cannot be trusted, the stage runs again."""

    images: tuple[str, ...] = ()
    dirs: tuple[Path, ...] = ()


class SourceResult(BaseModel):
    path: Path
    owner: str
    repo: str
    commit: str
    source: str
    task_id: str
    upstream: UpstreamInfo | None = None


class BuildStage(BaseModel):
    base_image: str
    image: str
    built: bool
    recipe: Recipe
    build_sh: str
    gold_sha256: str
    log: Path
    toolchain_image: str = Field("", description="base + the recipe's packages (the base when none)")

    def outside(self) -> Outside:
        return Outside(images=(self.image, self.base_image, self.runtime_image))

    @property
    def program(self) -> str:
        """The program's name (what its docs call it)."""
        return Path(self.recipe.executable).name

    @property
    def runtime_image(self) -> str:
        """What the cleanroom starts from: the toolchain layer, so the program's runtime
        libraries (installed with the recipe's Debian packages) are present."""
        return self.toolchain_image or self.base_image


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
