"""The OpenAI chat-completions backend (`tools` / `tool_calls`), with the SDK's retries."""

from __future__ import annotations

import logging
from typing import Any

import openai

from taskfoundry.agent.config import ModelConfig, priced_usage
from taskfoundry.agent.model import (
    Message,
    ModelError,
    ToolCall,
    ToolSpec,
    Turn,
    arguments_json,
    parse_arguments,
)

log = logging.getLogger(__name__)


class OpenAIModel:
    """A `Model` over the OpenAI chat-completions API (or any server speaking it)."""

    def __init__(self, config: ModelConfig, *, api_key: str, client: openai.OpenAI | None = None) -> None:
        self.config = config
        self.name = config.model
        self._price = config.price()
        self._client = client or openai.OpenAI(
            api_key=api_key,
            base_url=config.base_url,
            max_retries=config.max_retries,
            timeout=config.timeout,
        )

    def complete(self, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": to_openai_messages(messages),
            "max_completion_tokens": self.config.max_tokens,
        }
        if tools:
            kwargs["tools"] = to_openai_tools(tools)
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        try:
            response = self._client.chat.completions.create(**kwargs)
        except openai.APIError as exc:
            raise ModelError(f"openai {self.config.model}: {exc}") from exc
        return self._turn(response)

    def _turn(self, response: Any) -> Turn:
        if not response.choices:
            raise ModelError(f"openai {self.config.model}: response has no choices")
        choice = response.choices[0]
        message = choice.message
        calls = [_tool_call(i, raw) for i, raw in enumerate(message.tool_calls or [])]
        usage = response.usage
        return Turn(
            text=message.content or "",
            tool_calls=calls,
            usage=priced_usage(
                self._price,
                usage.prompt_tokens if usage else 0,
                usage.completion_tokens if usage else 0,
            ),
            stop_reason=choice.finish_reason,
        )


def _tool_call(index: int, raw: Any) -> ToolCall:
    call_id = raw.id or f"call_{index}"
    function = getattr(raw, "function", None)
    if raw.type != "function" or function is None:
        return ToolCall(id=call_id, name=str(raw.type), error="only function tools are supported")
    return parse_arguments(call_id, function.name, function.arguments)


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Chat-completions messages: tool results are `role: tool` messages with a call id."""
    return [_openai_message(m) for m in messages]


def _openai_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": arguments_json(c)},
                }
                for c in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}
