"""Model backend configuration, the price table, and building a backend at the edge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field

from taskfoundry.agent.model import Model, Usage
from taskfoundry.dotted import choose
from taskfoundry.errors import ConfigError

Provider = Literal["openai", "anthropic"]

#: Backend registry: provider name -> "module:class", imported only when used.
BACKENDS: dict[str, str] = {
    "openai": "taskfoundry.agent.openai_backend:OpenAIModel",
    "anthropic": "taskfoundry.agent.anthropic_backend:AnthropicModel",
}

#: The environment variable each provider's key is usually in.
DEFAULT_KEY_ENV: dict[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class Price(BaseModel):
    """What a model charges, in USD per million tokens."""

    model_config = {"extra": "forbid"}

    input_per_mtok: float = Field(ge=0, description="USD per million input (prompt) tokens")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens")


class ModelConfig(BaseModel):
    """Which model to call and how. Nothing here reads the environment by itself."""

    model_config = {"extra": "forbid"}

    provider: Provider = Field(description="API format: `openai` (chat completions) or `anthropic`")
    model: str = Field(description="model name sent to the API, and the key in `prices`")
    base_url: str | None = Field(default=None, description="API base URL; None means the SDK's default")
    api_key_env: str | None = Field(
        default=None,
        description="environment variable holding the API key; None: the provider's usual one",
    )
    max_retries: int = Field(default=4, ge=0, description="SDK retries on 408/409/429/5xx, backing off")
    timeout: float = Field(default=300.0, gt=0, description="seconds per HTTP request")
    max_tokens: int = Field(default=8192, gt=0, description="cap on output tokens per turn")
    temperature: float | None = Field(default=None, description="sampling temperature; None: the default")
    prices: dict[str, Price] = Field(
        default_factory=dict, description="price per model name; the configured model must be here"
    )

    def price(self) -> Price:
        """The configured model's price; a missing entry is a config error (budgets need it)."""
        try:
            return self.prices[self.model]
        except KeyError:
            known = ", ".join(sorted(self.prices)) or "none"
            raise ConfigError(f"no price for model {self.model!r} (priced: {known})") from None


def cost_usd(price: Price, input_tokens: int, output_tokens: int) -> float:
    """What `input_tokens` in and `output_tokens` out cost at `price`."""
    return (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6


def priced_usage(price: Price, input_tokens: int, output_tokens: int) -> Usage:
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost_usd(price, input_tokens, output_tokens),
    )


def resolve_api_key(config: ModelConfig, environ: Mapping[str, str]) -> str:
    """Read the API key from the variable the config names (or the provider's usual one)."""
    var = config.api_key_env or DEFAULT_KEY_ENV[config.provider]
    key = environ.get(var, "")
    if not key:
        raise ConfigError(f"{config.provider} model {config.model!r} needs an API key in ${var}")
    return key


def make_model(config: ModelConfig, environ: Mapping[str, str]) -> Model:
    """Build the backend for `config`, resolving its API key from `environ` (e.g. os.environ)."""
    backend = choose(
        BACKENDS,
        config.provider,
        lambda known: ConfigError(f"unknown provider {config.provider!r}; valid: {known}"),
    )
    model: Model = backend(config, api_key=resolve_api_key(config, environ))
    return model
