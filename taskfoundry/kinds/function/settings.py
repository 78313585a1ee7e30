"""The function kind's settings: `FunctionConfig` (the `function:` section of a config file)
and each of its stages' section of a `Config`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from taskfoundry.images.base import BaseImageConfig
from taskfoundry.pipeline.settings import StageSettings


class FunctionConfig(BaseModel):
    model_config = {"extra": "forbid", "frozen": True}

    allowed_libraries: tuple[str, ...] = Field(
        ("numpy",), description="third-party modules a WSC (weakly self-contained) function may use"
    )
    min_complexity: int = Field(2, description="lowest cyclomatic complexity kept (Code2Bench: 2)")
    max_complexity: int = Field(10, description="highest cyclomatic complexity kept (Code2Bench: 10)")
    max_cases: int = Field(500, description="cases kept per function at most (Code2Bench: ~500)")
    rounds: int = Field(8, description="hypothesis rounds (one seed each) while branches stay unreached")
    seed: int | None = Field(
        None,
        description="the rounds' seeds are seed+1, seed+2, ...; None (the default): the build's secret "
        "seed (kept in the task's hidden reports/secret.json), so a worker who runs this project's "
        "code cannot draw the hidden cases' inputs; set it to reproduce a build",
    )
    examples: int = Field(100, description="inputs hypothesis draws per round")
    call_timeout: float = Field(1.0, description="seconds one call of the reference may run")
    budget: float = Field(20.0, description="seconds of input generation per function")
    function_timeout: float = Field(90.0, description="seconds a function's child process may run in all")
    mutants: int = Field(8, description="mutants of the reference tried at the gate (at most)")
    jobs: int = Field(2, description="functions explored at once in the sandbox")
    memory_mb: int = Field(2048, description="memory of the sandbox container")


class FunctionsSettings(StageSettings):
    function: FunctionConfig = Field(default_factory=FunctionConfig)
    base: BaseImageConfig = Field(default_factory=BaseImageConfig)


class CasesSettings(StageSettings):
    function: FunctionConfig = Field(default_factory=FunctionConfig)


class GateSettings(StageSettings):
    function: FunctionConfig = Field(default_factory=FunctionConfig)


class PackageSettings(StageSettings):
    """What the package stage reads: where the tasks go, and the kind's knobs it records."""

    function: FunctionConfig = Field(default_factory=FunctionConfig)
