"""The provider-neutral conversation types and the `Model` protocol the agent loop talks to."""

from __future__ import annotations

import json
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from taskfoundry.errors import TaskfoundryError

Role = Literal["system", "user", "assistant", "tool"]


class ModelError(TaskfoundryError):
    """The model could not answer (API error after retries, bad response): ends the run."""


class ToolSpec(BaseModel):
    """A tool the model may call, described by a JSON schema of its arguments."""

    name: str = Field(description="tool name, as the model will call it")
    description: str = Field(description="what the tool does, shown to the model")
    parameters: dict[str, Any] = Field(description="JSON schema of the arguments object")


class ToolCall(BaseModel):
    """One tool call from the model. `error` is set when its arguments could not be parsed."""

    id: str = Field(description="the provider's call id; tool results refer to it")
    name: str = Field(description="name of the tool called")
    arguments: dict[str, Any] = Field(default_factory=dict, description="parsed arguments")
    raw_arguments: str | None = Field(default=None, description="arguments as sent, when not a JSON object")
    error: str | None = Field(default=None, description="why the arguments could not be parsed")

    @property
    def malformed(self) -> bool:
        return self.error is not None


class Usage(BaseModel):
    """Tokens used by one model call and what they cost."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class Turn(BaseModel):
    """One answer of the model: text, tool calls, and usage."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str | None = None


class Message(BaseModel):
    """One message of the conversation, in a form both providers' formats derive from."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list, description="assistant only")
    tool_call_id: str | None = Field(default=None, description="tool only: the call this answers")
    is_error: bool = Field(default=False, description="tool only: the call failed")

    @classmethod
    def assistant(cls, turn: Turn) -> Message:
        return cls(role="assistant", content=turn.text, tool_calls=list(turn.tool_calls))

    @classmethod
    def tool_result(cls, call: ToolCall, content: str, *, is_error: bool = False) -> Message:
        return cls(role="tool", content=content, tool_call_id=call.id, is_error=is_error)


class Model(Protocol):
    """Completes a conversation; raises `ModelError` when it cannot (after its own retries)."""

    name: str

    def complete(self, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        """The model's next turn given the conversation so far and the tools it may call."""
        ...


def parse_arguments(call_id: str, name: str, raw: object) -> ToolCall:
    """A ToolCall from arguments as a provider sent them (a JSON string or an object)."""
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolCall(id=call_id, name=name, raw_arguments=raw, error=f"invalid JSON: {exc}")
    if not isinstance(value, dict):
        text = raw if isinstance(raw, str) else json.dumps(raw)
        return ToolCall(id=call_id, name=name, raw_arguments=text, error="arguments must be a JSON object")
    return ToolCall(id=call_id, name=name, arguments=value)


def arguments_json(call: ToolCall) -> str:
    """The arguments as a JSON string, as sent: the raw text for a malformed call."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments)
