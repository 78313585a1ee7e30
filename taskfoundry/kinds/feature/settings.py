"""The feature kind's configuration (`feature:` in the config file) and its stages' sections."""

from __future__ import annotations

from pydantic import BaseModel, Field

from taskfoundry.grading.config import EvalConfig
from taskfoundry.images.base import BaseImageConfig
from taskfoundry.pipeline.settings import StageSettings


class FeatureConfig(BaseModel):
    """Thresholds and budgets of feature tasks; ACE-Bench's gates are the defaults."""

    model_config = {"extra": "forbid"}

    min_removed_lines: int = Field(100, ge=0, description="a task removes more than this many lines")
    min_f2p: int = Field(10, ge=1, description="a task has at least this many fail-to-pass tests")
    max_removed_lines: int = Field(
        1500, ge=1, description="cap on removed lines: callees past it stay in the stripped repository"
    )
    p2p_files: int = Field(8, ge=0, description="passing test files run as pass-to-pass per task")
    test_timeout: float = Field(60, gt=0, description="seconds one test may run (pytest-timeout)")
    suite_timeout: float = Field(1200, gt=0, description="seconds one pytest run may take")
    value_runs: int = Field(
        2, ge=1, description="recorded runs of the reference (hash seeds differ): what varies is typed only"
    )
    levels: list[int] = Field(
        default_factory=lambda: [1, 2], description="1: stripped repo; 2: interface only"
    )
    max_tasks: int | None = Field(None, ge=1, description="keep at most this many features per source")
    test_requires: list[str] = Field(
        default_factory=list,
        description="more requirements of the test suite (taskfoundry.yaml adds its own)",
    )


class FeatureSettings(StageSettings):
    """What every feature stage reads: names, the base image, the thresholds, the harness."""

    base: BaseImageConfig = Field(default_factory=BaseImageConfig)
    feature: FeatureConfig = Field(default_factory=FeatureConfig)
    harness: EvalConfig = Field(default_factory=EvalConfig)
