"""One config for a whole run: defaults, then a YAML file, then CLI flags (merged once, in the CLI)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.builders.agent import BuildAgentConfig
from taskfoundry.builders.recipe import RecipeFile
from taskfoundry.errors import ConfigError
from taskfoundry.filtering.filter import FilterConfig
from taskfoundry.flows.options import OrchestrationConfig
from taskfoundry.harness.config import EvalConfig
from taskfoundry.images.base import BaseImageConfig
from taskfoundry.models import load_yaml_model
from taskfoundry.sources.registry import SourceConfig
from taskfoundry.testgen.agent_support import AgentGenConfig
from taskfoundry.testgen.explorer import ExplorerConfig


class Config(BaseModel):
    """Everything a build reads. Every field has a working default: no key, no server."""

    model_config = {"extra": "forbid"}

    out: Path = Field(Path("out"), description="output directory (tasks/ and work/ inside)")
    namespace: str = Field("taskfoundry", description="image namespace, as $PROGRAMBENCH_DOCKER_ORG")
    executable: str | None = Field(None, description="which built program is the task's")
    recipe: RecipeFile | None = Field(
        None, description="recipe fields that override the repository's taskfoundry.yaml and detection"
    )
    generator: str = Field("explorer", description="test generator: explorer (no key) or agent")
    sources: SourceConfig = Field(default_factory=SourceConfig)
    build_agent: BuildAgentConfig = Field(default_factory=BuildAgentConfig)
    base: BaseImageConfig = Field(default_factory=BaseImageConfig)
    explorer: ExplorerConfig = Field(default_factory=ExplorerConfig)
    filter: FilterConfig = Field(default_factory=FilterConfig)
    eval: EvalConfig = Field(
        default_factory=EvalConfig, description="the grading harness: used by the filter and `eval`"
    )
    agent: AgentGenConfig = Field(default_factory=AgentGenConfig)
    orchestration: OrchestrationConfig = Field(default_factory=OrchestrationConfig)

    @property
    def tasks_dir(self) -> Path:
        return self.out / "tasks"

    @property
    def work_dir(self) -> Path:
        return self.out / "work"


def load_config(path: Path | None, overrides: dict[str, object] | None = None) -> Config:
    """Defaults, then the YAML at `path` (if any), then `overrides` (CLI flags)."""
    config = load_yaml_model(path, Config) if path else Config()
    if overrides:
        try:
            config = Config.model_validate({**config.model_dump(), **overrides})
        except ValueError as exc:
            raise ConfigError(f"bad option: {exc}") from exc
    return config
