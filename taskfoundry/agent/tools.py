"""The agent's tools: `bash` in the sandbox, the caller's `coverage` callable, and `submit`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping

from pydantic import BaseModel, Field

from taskfoundry.agent.model import ToolCall, ToolSpec
from taskfoundry.agent.schema import Observation
from taskfoundry.errors import TaskfoundryError
from taskfoundry.sandbox.base import Sandbox

log = logging.getLogger(__name__)

SUBMIT = "submit"


class CoverageFeedback(BaseModel):
    """What the injected coverage callable returns; the loop shows it to the model as is."""

    percent: float = Field(description="line coverage of first-party code, 0-100")
    uncovered: list[str] = Field(default_factory=list, description="e.g. `src/main.c:40-52`")
    detail: str = Field(default="", description="anything else worth telling the agent")

    @classmethod
    def from_missed(
        cls, percent: float, missed: Mapping[str, Iterable[int]], detail: str = ""
    ) -> CoverageFeedback:
        """From missed line numbers per file, shown as ranges (`a.c:3-5`, `a.c:9`)."""
        uncovered = [
            f"{name}:{span}" for name in sorted(missed) for span in _ranges(sorted(set(missed[name])))
        ]
        return cls(percent=percent, uncovered=uncovered, detail=detail)


def _ranges(lines: list[int]) -> list[str]:
    spans: list[list[int]] = []
    for line in lines:
        if spans and line == spans[-1][1] + 1:
            spans[-1][1] = line
        else:
            spans.append([line, line])
    return [f"{a}" if a == b else f"{a}-{b}" for a, b in spans]


CoverageFn = Callable[[], CoverageFeedback]

BASH_SPEC = ToolSpec(
    name="bash",
    description="Run one shell command in the sandbox and return its exit code and output.",
    parameters={
        "type": "object",
        "properties": {"command": {"type": "string", "description": "the command to run"}},
        "required": ["command"],
    },
)
COVERAGE_SPEC = ToolSpec(
    name="coverage",
    description="Measure line coverage of what you have written so far; report uncovered lines.",
    parameters={"type": "object", "properties": {}},
)
SUBMIT_SPEC = ToolSpec(
    name=SUBMIT,
    description="Finish: the files you left in the output directory are your answer.",
    parameters={
        "type": "object",
        "properties": {"summary": {"type": "string", "description": "what your answer does"}},
    },
)


def truncate(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters, keeping its head and tail."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


class Toolbox:
    """Runs the model's tool calls (all but `submit`, which the loop handles)."""

    def __init__(
        self,
        sandbox: Sandbox,
        workdir: str,
        *,
        bash_timeout: float,
        output_limit: int,
        coverage: CoverageFn | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.workdir = workdir
        self.bash_timeout = bash_timeout
        self.output_limit = output_limit
        self.coverage = coverage
        self.specs = [BASH_SPEC, *([COVERAGE_SPEC] if coverage else []), SUBMIT_SPEC]

    def run(self, call: ToolCall, time_left: float | None = None) -> Observation:
        """Run one call; bad calls come back as error observations, not exceptions."""
        names = [s.name for s in self.specs]
        if call.name not in names:
            return _error(call, f"unknown tool {call.name!r}; tools: {', '.join(names)}")
        if call.malformed:
            return _error(
                call,
                f"could not parse the arguments of {call.name}: {call.error}. "
                "Send the arguments as one JSON object.",
            )
        if call.name == "coverage":
            return self._coverage(call)
        command = call.arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return _error(call, "bash needs a non-empty string argument `command`")
        return self._bash(call, command, time_left)

    def _bash(self, call: ToolCall, command: str, time_left: float | None) -> Observation:
        timeout = self.bash_timeout if time_left is None else max(1.0, min(self.bash_timeout, time_left))
        result = self.sandbox.exec(command, timeout=timeout, workdir=self.workdir)
        notes = [f"exit code: {result.exit_code}"]
        if result.timed_out:
            notes.append(f"timed out after {timeout:g}s and was killed")
        if result.truncated:
            notes.append("output was cut at the sandbox's cap")
        body = "\n".join(notes) + "\n" + result.text()
        return Observation(tool_call_id=call.id, tool=call.name, output=truncate(body, self.output_limit))

    def _coverage(self, call: ToolCall) -> Observation:
        assert self.coverage is not None
        try:
            report = self.coverage()
        except TaskfoundryError as exc:
            log.warning("coverage measurement failed: %s", exc)
            return _error(call, f"coverage could not be measured: {exc}")
        lines = [f"line coverage: {report.percent:.1f}%"]
        if report.uncovered:
            lines += ["uncovered lines:", *report.uncovered]
        if report.detail:
            lines.append(report.detail)
        text = truncate("\n".join(lines), self.output_limit)
        return Observation(tool_call_id=call.id, tool=call.name, output=text)


def _error(call: ToolCall, message: str) -> Observation:
    return Observation(tool_call_id=call.id, tool=call.name, output=f"error: {message}", is_error=True)
