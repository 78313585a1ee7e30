"""SolveConfig: who drives the worker (a model or a command), its budgets, and the container."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from taskfoundry.agent.config import ModelConfig, Price
from taskfoundry.errors import ConfigError
from taskfoundry.grading.config import EvalConfig


class Isolation(BaseModel):
    """How the worker's container is held. The defaults are the worker's view; the fields exist
    so the isolation tests can switch one defence off and show it is the one that holds."""

    user: str = Field("1000:1000", description="uid:gid the agent's commands run as (the worker)")
    network: bool = Field(False, description="network in the worker's container (never for a real run)")
    home: str = Field(
        "/home/worker", description="the worker's home (made if the image has none), as at grading"
    )
    memory_mb: int = Field(4096, description="memory limit of the container")
    pids: int = Field(512, description="process limit of the container")
    submission_mb: int = Field(
        200, description="the packed workspace copied out at most (bigger: the run ends in sandbox_error)"
    )
    stats_bytes: int = Field(10_000, description="an external agent's $TF_STATS read at most (bigger: zero)")


class SolveConfig(BaseModel):
    """One of `model` or `agent_command`; budgets apply to the model loop (time to both)."""

    model_config = {"extra": "forbid"}

    model: ModelConfig | None = Field(None, description="the project's own loop on this model")
    agent_command: str | None = Field(
        None, description="an external agent: a shell command run in the workspace"
    )
    agent_dir: str | None = Field(
        None, description="host folder copied to /agent (read-only) for the command"
    )
    step_limit: int | None = Field(50, ge=1, description="model calls before the run stops")
    cost_limit: float | None = Field(5.0, gt=0, description="USD spent before the run stops")
    time_limit: float | None = Field(3600.0, gt=0, description="wall-clock seconds of one task's run")
    bash_timeout: float = Field(120.0, gt=0, description="seconds one bash call of the model may run")
    isolation: Isolation = Field(default_factory=Isolation)
    eval: EvalConfig = Field(default_factory=EvalConfig, description="grading, for `run`")
    concurrency: int = Field(1, ge=1, description="tasks solved at once by `run`")

    @model_validator(mode="after")
    def _one_driver(self) -> SolveConfig:
        if (self.model is None) == (self.agent_command is None):
            raise ValueError("give one of a model (--model) or an agent command (--agent-command)")
        return self

    @property
    def driver(self) -> str:
        """What the report names the driver: `provider:model`, or `command`."""
        return "command" if self.model is None else f"{self.model.provider}:{self.model.model}"


def model_config_of(
    spec: str, base_url: str | None = None, api_key_env: str | None = None, price: str | None = None
) -> ModelConfig:
    """`PROVIDER:NAME` (openai:gpt-4.1, anthropic:claude-sonnet-4-5) and an optional price
    `IN,OUT` (USD per million tokens; without one, cost is counted as 0)."""
    provider, sep, name = spec.partition(":")
    if not sep or not name or provider not in ("openai", "anthropic"):
        raise ConfigError(f"--model wants PROVIDER:NAME with provider openai or anthropic, not {spec!r}")
    try:
        cost_in, cost_out = (float(x) for x in (price or "0,0").split(","))
    except ValueError:
        raise ConfigError(f"--price wants IN,OUT in USD per million tokens, not {price!r}") from None
    return ModelConfig(
        provider=provider,  # type: ignore[arg-type]  # checked just above
        model=name,
        base_url=base_url,
        api_key_env=api_key_env,
        prices={name: Price(input_per_mtok=cost_in, output_per_mtok=cost_out)},
    )
