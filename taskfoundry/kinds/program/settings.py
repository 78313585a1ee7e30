"""The program kind's settings: each of its stages' section of a `Config`, and the component
sections they are made of (which `taskfoundry.config` composes into the run's `Config`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.filter.run import FilterConfig
from taskfoundry.kinds.program.mutate.models import MutationConfig
from taskfoundry.kinds.program.testgen.agent_support import AgentGenConfig
from taskfoundry.kinds.program.testgen.base import GeneratorSettings
from taskfoundry.kinds.program.testgen.explorer import ExplorerConfig
from taskfoundry.pipeline.settings import StageSettings

__all__ = [
    "AgentGenConfig",
    "CleanroomSettings",
    "ExplorerConfig",
    "FilterConfig",
    "FilterSettings",
    "GenerateSettings",
    "MutationConfig",
    "MutationSettings",
    "PackageSettings",
]


class CleanroomSettings(StageSettings):
    """What the cleanroom stage reads."""

    usage_timeout: float = 5.0  # seconds `--help` may run (the explorer's probe timeout)
    # an instrumentable gold (a worker can load code into it: reports/integrity.json) is
    # shipped labelled (`record`), or is an error and no task (`require`: sealed golds only)
    integrity: Literal["record", "require"] = "record"
    # the leak scan's listings of base images, by image id: shared by every run on this
    # machine, so each base is walked once (see docs/leak-scan.md)
    listing_dir: Path = Field(default_factory=lambda: Path.home() / ".cache" / "taskfoundry" / "leakscan")


class GenerateSettings(StageSettings):
    """What the generate stage reads: the generator and its section."""

    generator: GeneratorSettings = Field(default_factory=GeneratorSettings)

    @property
    def uses_model(self) -> bool:
        """Whether it holds a model-call slot: every generator but the explorer calls one."""
        return self.generator.name != "explorer"


class FilterSettings(BaseModel):
    """The filter's section: its runs and dummies, and the grading harness it shares with `eval`."""

    model_config = ConfigDict(frozen=True)

    filter: FilterConfig = FilterConfig()
    harness: EvalConfig = EvalConfig()


class MutationSettings(StageSettings):
    """The mutation stage's section: the analysis, the explorer it runs again for guided
    generation, and the filter (with the grading harness) the new tests and the mutants go through."""

    mutation: MutationConfig = Field(default_factory=MutationConfig)
    explorer: ExplorerConfig = Field(default_factory=ExplorerConfig)
    # the generator that wrote the suite (only its section): the agent gets the survivors back
    generator: GeneratorSettings = Field(default_factory=GeneratorSettings)
    filter: FilterSettings = Field(default_factory=FilterSettings)


class PackageSettings(StageSettings):
    """What the package stage reads: where the task goes and how its images are named."""
