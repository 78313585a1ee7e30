"""A `Model` that replays canned turns: the agent loop's test double, shipped with the package."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from taskfoundry.agent.model import (
    Message,
    ModelError,
    ToolCall,
    ToolSpec,
    Turn,
    Usage,
    parse_arguments,
)

_ids = itertools.count(1)


class ScriptedModel:
    """Answers each `complete` with the next scripted item; an exception item is raised.

    Every conversation it was shown is kept in `seen` (copies), for assertions.
    """

    def __init__(self, script: Iterable[Turn | BaseException], name: str = "scripted") -> None:
        self.name = name
        self._script = list(script)
        self._next = 0
        self.seen: list[list[Message]] = []
        self.tools: list[list[ToolSpec]] = []

    def complete(self, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        self.seen.append([m.model_copy(deep=True) for m in messages])
        self.tools.append(list(tools))
        if self._next >= len(self._script):
            raise ModelError(f"scripted model ran out of turns after {len(self._script)}")
        item = self._script[self._next]
        self._next += 1
        if isinstance(item, BaseException):
            raise item
        return item

    @property
    def remaining(self) -> int:
        return len(self._script) - self._next


def _usage(cost: float, tokens: tuple[int, int]) -> Usage:
    return Usage(input_tokens=tokens[0], output_tokens=tokens[1], cost_usd=cost)


def say(text: str, *, cost: float = 0.0, tokens: tuple[int, int] = (0, 0)) -> Turn:
    """A turn with text and no tool call."""
    return Turn(text=text, usage=_usage(cost, tokens), stop_reason="stop")


def call(
    name: str, text: str = "", *, cost: float = 0.0, tokens: tuple[int, int] = (0, 0), **args: Any
) -> Turn:
    """A turn with one well-formed tool call: `call("bash", command="ls")`."""
    tool_call = ToolCall(id=f"scripted_{next(_ids)}", name=name, arguments=args)
    return Turn(text=text, tool_calls=[tool_call], usage=_usage(cost, tokens), stop_reason="tool_calls")


def bash(command: str, *, cost: float = 0.0) -> Turn:
    """A turn that runs one bash command."""
    return call("bash", cost=cost, command=command)


def submit(summary: str = "done", *, cost: float = 0.0) -> Turn:
    """A turn that ends the run."""
    return call("submit", cost=cost, summary=summary)


def malformed(name: str, raw_arguments: str, *, cost: float = 0.0) -> Turn:
    """A turn with one tool call whose arguments are not a JSON object (e.g. cut-off JSON)."""
    tool_call = parse_arguments(f"scripted_{next(_ids)}", name, raw_arguments)
    return Turn(tool_calls=[tool_call], usage=_usage(cost, (0, 0)), stop_reason="tool_calls")


def fail(message: str = "scripted model failure") -> ModelError:
    """A script item that makes `complete` raise, as a backend does after its retries."""
    return ModelError(message)
