"""Scripted replies of the fake LLM server, and how each API format renders them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter


class FakeToolCall(BaseModel):
    """A tool call to reply with. String `arguments` are sent verbatim (so may be bad JSON)."""

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class FakeTurn(BaseModel):
    """A successful reply: text and tool calls, with token counts."""

    kind: Literal["turn"] = "turn"
    text: str = ""
    tool_calls: list[FakeToolCall] = Field(default_factory=list)
    input_tokens: int = 100
    output_tokens: int = 20


class FakeError(BaseModel):
    """An HTTP error reply, e.g. 429 with `retry_after` seconds, or 500."""

    kind: Literal["error"] = "error"
    status: int
    message: str = "fake server error"
    retry_after: float | None = None


FakeReply = Annotated[FakeTurn | FakeError, Field(discriminator="kind")]
SCRIPT = TypeAdapter(list[FakeReply])


def load_script(path: Path) -> list[FakeTurn | FakeError]:
    """A script from a JSON file: a list of `{"kind": "turn" | "error", ...}` objects."""
    return SCRIPT.validate_json(path.read_bytes())


def _call_id(call: FakeToolCall, prefix: str, n: int, i: int) -> str:
    return call.id or f"{prefix}{n}_{i}"


def openai_reply(turn: FakeTurn, n: int, model: str) -> dict[str, Any]:
    """A chat.completion object for reply number `n`."""
    calls = [
        {
            "id": _call_id(c, "call_", n, i),
            "type": "function",
            "function": {
                "name": c.name,
                "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments),
            },
        }
        for i, c in enumerate(turn.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {
            "prompt_tokens": turn.input_tokens,
            "completion_tokens": turn.output_tokens,
            "total_tokens": turn.input_tokens + turn.output_tokens,
        },
    }


def _anthropic_input(arguments: dict[str, Any] | str) -> Any:
    """`input` of a tool_use block: an object, or for a malformed call the text as sent."""
    if isinstance(arguments, dict):
        return arguments
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def anthropic_reply(turn: FakeTurn, n: int, model: str) -> dict[str, Any]:
    """A messages API `message` object for reply number `n`."""
    content: list[dict[str, Any]] = []
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    for i, c in enumerate(turn.tool_calls):
        content.append(
            {
                "type": "tool_use",
                "id": _call_id(c, "toolu_", n, i),
                "name": c.name,
                "input": _anthropic_input(c.arguments),
            }
        )
    return {
        "id": f"msg_fake_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
    }


_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def openai_error(error: FakeError) -> dict[str, Any]:
    kind = "rate_limit_exceeded" if error.status == 429 else "server_error"
    return {"error": {"message": error.message, "type": kind, "param": None, "code": kind}}


def anthropic_error(error: FakeError) -> dict[str, Any]:
    kind = _ANTHROPIC_ERROR_TYPES.get(error.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": error.message}}
