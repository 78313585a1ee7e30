"""Orchestration settings: concurrency limits, failure budget, resume, refresh schedule.

Plain pydantic (no Prefect import), so `taskfoundry.config` can hold it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class RefreshConfig(BaseModel):
    """Where `taskfoundry refresh` finds candidates, and when `taskfoundry serve` runs it."""

    model_config = {"extra": "forbid"}

    catalog: Path | None = Field(None, description="YAML list of sources (with optional overrides)")
    sources: list[str] = Field(
        default_factory=list,
        description="more candidates, any SOURCE string (path, git URL, debian:PKG, crate:NAME, pypi:NAME)",
    )
    cron: str = Field("0 3 * * *", description="cron schedule of the served refresh deployment")
    timezone: str = Field("UTC", description="time zone of the cron schedule")


class OrchestrationConfig(BaseModel):
    """How flows run: limits shared by every run on one Prefect server, budgets, resume."""

    model_config = {"extra": "forbid"}

    concurrency: int = Field(2, ge=1, description="sources built at once by build-many and refresh")
    docker_builds: int = Field(
        2, ge=1, description="slots of the global concurrency limit on Docker image builds"
    )
    model_calls: int = Field(
        4, ge=1, description="slots of the global concurrency limit on model-driven generation"
    )
    max_failures: float | None = Field(
        None,
        ge=0,
        description="failure budget of a batch: a fraction of its sources (< 1) or a count (>= 1); "
        "the run ends early once more fail; None: no budget",
    )
    dask_address: str | None = Field(
        None,
        description="run a batch's sources on this Dask scheduler (needs prefect-dask); "
        "None: threads in this process",
    )
    resume: bool = Field(
        True, description="reuse persisted stage results (cache key: inputs + task source + version)"
    )
    refresh: RefreshConfig = Field(default_factory=RefreshConfig)
