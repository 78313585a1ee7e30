"""The Anthropic messages backend (`tools` / `tool_use` / `tool_result`), with the SDK's retries."""

from __future__ import annotations

import logging
from typing import Any

import anthropic

from taskfoundry.agent.config import ModelConfig, priced_usage
from taskfoundry.agent.model import Message, ModelError, ToolCall, ToolSpec, Turn, parse_arguments

log = logging.getLogger(__name__)


class AnthropicModel:
    """A `Model` over the Anthropic messages API."""

    def __init__(
        self, config: ModelConfig, *, api_key: str, client: anthropic.Anthropic | None = None
    ) -> None:
        self.config = config
        self.name = config.model
        self._price = config.price()
        self._client = client or anthropic.Anthropic(
            api_key=api_key,
            base_url=config.base_url,
            max_retries=config.max_retries,
            timeout=config.timeout,
        )

    def complete(self, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        system, conversation = to_anthropic_messages(messages)
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": conversation,
            "max_tokens": self.config.max_tokens,
        }
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = to_anthropic_tools(tools)
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        try:
            response = self._client.messages.create(**kwargs)
        except anthropic.APIError as exc:
            raise ModelError(f"anthropic {self.config.model}: {exc}") from exc
        return self._turn(response)

    def _turn(self, response: Any) -> Turn:
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in response.content or []:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(parse_arguments(block.id, block.name, block.input))
            else:
                log.debug("ignoring %s block from the model", block.type)
        usage = response.usage
        return Turn(
            text="\n".join(texts),
            tool_calls=calls,
            usage=priced_usage(
                self._price,
                usage.input_tokens if usage else 0,
                usage.output_tokens if usage else 0,
            ),
            stop_reason=response.stop_reason,
        )


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def to_anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and the alternating user/assistant messages of content blocks.

    Tool results become `tool_result` blocks in a user message; consecutive messages of one
    role (tool results followed by feedback, say) merge into one message.
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    merged: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": blocks})
    return system, merged


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
                "is_error": message.is_error,
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        # A malformed call cannot be replayed as sent: `input` must be an object.
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return blocks or [{"type": "text", "text": "(empty)"}]
