"""One config for a whole run: defaults, then a YAML file, then CLI flags (merged once, in the CLI).

Each kind declares its sections in its `settings.py` (shared components beside their code);
this module composes them, and `taskfoundry.sections` cuts each stage's own out of a whole
`Config`. The orchestration section (how flows run) is defined here, not in `flows/`, so
nothing below the flows imports the orchestration layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from taskfoundry.builders.agent import BuildAgentConfig
from taskfoundry.builders.recipe import RecipeFile
from taskfoundry.discover.settings import DiscoverConfig
from taskfoundry.errors import ConfigError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.images.base import BaseImageConfig
from taskfoundry.kinds.feature.settings import FeatureConfig
from taskfoundry.kinds.function.settings import FunctionConfig
from taskfoundry.kinds.program.settings import (
    AcceptConfig,
    AgentGenConfig,
    ExplorerConfig,
    FilterConfig,
    MutationConfig,
)
from taskfoundry.kinds.registry import DEFAULT as DEFAULT_KIND
from taskfoundry.kinds.registry import check_name
from taskfoundry.models import load_yaml_model
from taskfoundry.naming import tasks_dir, work_dir
from taskfoundry.sources.registry import SourceConfig
from taskfoundry.store import is_url, local_root


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
    deployment: str | None = Field(
        None,
        description="run each source of a batch as a flow run of this deployment of the "
        "`build-source` flow (e.g. build-source/build-source) on its work pool's workers; needs an "
        "object store `out`. None: in the batch's own process",
    )
    source_retries: int = Field(
        1, ge=0, description="a source whose flow run crashed (its worker died) is run again this often"
    )
    heartbeat_seconds: int = Field(
        30,
        ge=30,
        description="a dispatched source's flow run sends a heartbeat this often; one silent for 3 "
        "(its worker or machine died) is marked Crashed by a server automation, then retried",
    )
    resume: bool = Field(
        True, description="reuse persisted stage results (cache key: inputs + task source + version)"
    )
    refresh: RefreshConfig = Field(default_factory=RefreshConfig)


class Config(BaseModel):
    """Everything a build reads. Every field has a working default: no key, no server."""

    model_config = {"extra": "forbid"}

    out: Path = Field(
        Path("out"), validate_default=True, description="output directory (tasks/ and work/ inside)"
    )
    store: str | None = Field(
        None,
        description="object storage OUT (an fsspec URL, s3://bucket/prefix): tasks, stage results "
        "and run records published there; `out` is then this worker's own local folder",
    )
    namespace: str = Field("taskfoundry", description="image namespace, as $PROGRAMBENCH_DOCKER_ORG")
    executable: str | None = Field(None, description="which built program is the task's")
    recipe: RecipeFile | None = Field(
        None, description="recipe fields that override the repository's taskfoundry.yaml and detection"
    )
    kind: str = Field(DEFAULT_KIND, description="task kind: program, function or feature (taskfoundry.kinds)")
    generator: str = Field("explorer", description="test generator: explorer (no key) or agent")
    sources: SourceConfig = Field(default_factory=SourceConfig)
    discover: DiscoverConfig = Field(
        default_factory=DiscoverConfig, description="`taskfoundry discover`: bounds, cache, seeds"
    )
    build_agent: BuildAgentConfig = Field(default_factory=BuildAgentConfig)
    base: BaseImageConfig = Field(default_factory=BaseImageConfig)
    explorer: ExplorerConfig = Field(default_factory=ExplorerConfig)
    filter: FilterConfig = Field(default_factory=FilterConfig)
    eval: EvalConfig = Field(
        default_factory=EvalConfig, description="the grading harness: used by the filter and `eval`"
    )
    agent: AgentGenConfig = Field(default_factory=AgentGenConfig)
    mutation: MutationConfig = Field(default_factory=MutationConfig)
    accept: AcceptConfig = Field(
        default_factory=AcceptConfig,
        description="the program kind's acceptance gate: what makes a task benchmark-grade",
    )
    function: FunctionConfig = Field(default_factory=FunctionConfig, description="the function kind's stages")
    feature: FeatureConfig = Field(
        default_factory=FeatureConfig, description="the feature kind: thresholds, levels, budgets"
    )
    orchestration: OrchestrationConfig = Field(default_factory=OrchestrationConfig)

    @model_validator(mode="before")
    @classmethod
    def _url_out(cls, data: Any) -> Any:
        """`out: s3://bucket/prefix` means: publish there, build in a local folder of this worker."""
        if isinstance(data, dict) and is_url(str(data.get("out", ""))):
            url = str(data["out"]).rstrip("/")
            return {**data, "store": url, "out": local_root(url)}
        return data

    @field_validator("out")
    @classmethod
    def _absolute_out(cls, out: Path) -> Path:
        """A relative `out` is the caller's folder: the stages run git and builds from others
        (`Config(out=Path("out"))` through the Python API failed at `git archive -o out/...`)."""
        return out.resolve()

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, name: str) -> str:
        try:
            return check_name(name)
        except ConfigError as exc:  # pydantic reports a ValueError with the field's name
            raise ValueError(exc.message) from exc

    @property
    def tasks_dir(self) -> Path:
        return tasks_dir(self.out)

    @property
    def work_dir(self) -> Path:
        return work_dir(self.out)


def load_config(path: Path | None, overrides: dict[str, object] | None = None) -> Config:
    """Defaults, then the YAML at `path` (if any), then `overrides` (CLI flags)."""
    config = load_yaml_model(path, Config) if path else Config()
    if overrides:
        try:
            config = Config.model_validate({**config.model_dump(), **overrides})
        except ValueError as exc:
            raise ConfigError(f"bad option: {exc}") from exc
    return config
