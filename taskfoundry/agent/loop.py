"""The agent loop: ask the model, run its tool calls, repeat until it submits or a budget ends it.

Usage: `run_agent(model, sandbox, AgentTask(...), AgentConfig(), trajectory_path=path)`.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from taskfoundry.agent.model import Message, Model, ModelError, ToolCall, Turn, Usage
from taskfoundry.agent.prompts import render
from taskfoundry.agent.schema import (
    AgentConfig,
    AgentResult,
    AgentTask,
    Budget,
    Failure,
    Observation,
    Status,
    Step,
    Trajectory,
    write_trajectory,
)
from taskfoundry.agent.tools import SUBMIT, CoverageFn, Toolbox
from taskfoundry.errors import SandboxError
from taskfoundry.sandbox.base import Sandbox

log = logging.getLogger(__name__)

NO_TOOL_CALL = "Your reply called no tool. Use `bash` to work, and `submit` when you are done."
AFTER_SUBMIT = "not run: the run was submitted earlier in this turn"


class Round(BaseModel):
    """What the feedback hook sees when the agent submits."""

    revisions: int
    step: int
    summary: str
    output_dir: str
    files: list[str]
    usage: Usage


#: Called on each submit; returns revision requests (user messages), or nothing to accept.
FeedbackFn = Callable[[Round], Sequence[str]]


def run_agent(
    model: Model,
    sandbox: Sandbox,
    task: AgentTask,
    config: AgentConfig | None = None,
    *,
    trajectory_path: Path,
    coverage: CoverageFn | None = None,
    feedback: FeedbackFn | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> AgentResult:
    """Let `model` work on `task` until it submits its files in `task.output_dir` or a budget
    ends the run; never raises on model failure."""
    run = _Run(model, sandbox, task, config or AgentConfig(), trajectory_path, coverage, clock)
    while (budget := run.budget_spent()) is None:
        try:
            turn = model.complete(list(run.messages), run.toolbox.specs)
        except ModelError as exc:
            log.warning("model failed after step %d: %s", len(run.trajectory.steps), exc)
            return run.finish("error", error=f"model: {exc}", failure="model")
        try:
            summary = run.act(turn)
            if summary is not None and not run.revise(summary, feedback):
                return run.finish("submitted")
        except SandboxError as exc:
            log.warning("sandbox failed: %s", exc)
            return run.finish("error", error=f"sandbox: {exc}", failure="sandbox")
    return run.finish("exhausted", exhausted=budget)


class _Run:
    """The state of one run: conversation, usage, and the trajectory file kept up to date."""

    def __init__(
        self,
        model: Model,
        sandbox: Sandbox,
        task: AgentTask,
        config: AgentConfig,
        path: Path,
        coverage: CoverageFn | None,
        clock: Callable[[], float],
    ) -> None:
        self.sandbox = sandbox
        self.task = task
        self.config = config
        self.path = path
        self.clock = clock
        self.started = clock()
        self.usage = Usage()
        self.revisions = 0
        self.toolbox = Toolbox(
            sandbox,
            task.workdir,
            bash_timeout=config.bash_timeout,
            output_limit=config.output_limit,
            coverage=coverage,
        )
        tools = "\n".join(f"- `{s.name}`: {s.description}" for s in self.toolbox.specs)
        variables = {
            **task.variables,
            "workdir": task.workdir,
            "output_dir": task.output_dir,
            "instructions": task.instructions,
            "tools": tools,
        }
        self.trajectory = Trajectory(
            model=model.name,
            started_at=datetime.now(UTC),
            task=task,
            config=config,
            messages=[
                Message(role="system", content=render(task.system, variables, "system")),
                Message(role="user", content=render(task.prompt, variables, "task")),
            ],
        )
        write_trajectory(path, self.trajectory)

    @property
    def messages(self) -> list[Message]:
        return self.trajectory.messages

    def elapsed(self) -> float:
        return self.clock() - self.started

    def time_left(self) -> float | None:
        limit = self.config.time_limit
        return None if limit is None else limit - self.elapsed()

    def budget_spent(self) -> Budget | None:
        """The first budget used up, checked before each model call."""
        cfg = self.config
        if cfg.step_limit is not None and len(self.trajectory.steps) >= cfg.step_limit:
            return "steps"
        if cfg.cost_limit is not None and self.usage.cost_usd >= cfg.cost_limit:
            return "cost"
        if cfg.time_limit is not None and self.elapsed() >= cfg.time_limit:
            return "time"
        return None

    def act(self, turn: Turn) -> str | None:
        """Run the turn's tool calls and record the step; the submit summary if it submitted."""
        self.usage += turn.usage
        self.messages.append(Message.assistant(turn))
        observations, summary = self._run_calls(turn.tool_calls)
        self.messages.extend(obs.message() for obs in observations)
        if not turn.tool_calls:
            self.messages.append(Message(role="user", content=NO_TOOL_CALL))
        step = Step(
            index=len(self.trajectory.steps) + 1,
            turn=turn,
            observations=observations,
            usage_total=self.usage,
            elapsed_s=self.elapsed(),
        )
        self.trajectory.steps.append(step)
        write_trajectory(self.path, self.trajectory)
        return summary

    def _run_calls(self, calls: list[ToolCall]) -> tuple[list[Observation], str | None]:
        observations: list[Observation] = []
        summary: str | None = None
        for call in calls:
            if summary is not None:
                obs = Observation(tool_call_id=call.id, tool=call.name, output=AFTER_SUBMIT, is_error=True)
            elif call.name == SUBMIT and not call.malformed:
                summary = str(call.arguments.get("summary", ""))
                obs = Observation(tool_call_id=call.id, tool=call.name, output="submitted")
            else:
                obs = self.toolbox.run(call, self.time_left())
            observations.append(obs)
        return observations, summary

    def revise(self, summary: str, feedback: FeedbackFn | None) -> bool:
        """Ask the feedback hook about a submit; True if it requested a revision."""
        if feedback is None or self.revisions >= self.config.max_revisions:
            return False
        round_ = Round(
            revisions=self.revisions,
            step=len(self.trajectory.steps),
            summary=summary,
            output_dir=self.task.output_dir,
            files=self.output_files(),
            usage=self.usage,
        )
        notes = [note for note in feedback(round_) if note.strip()]
        if not notes:
            return False
        self.revisions += 1
        self.messages.extend(Message(role="user", content=note) for note in notes)
        self.trajectory.steps[-1].feedback.extend(notes)
        write_trajectory(self.path, self.trajectory)
        return True

    def output_files(self) -> list[str]:
        """The answer's files in the output directory, relative to it."""
        with tempfile.TemporaryDirectory(prefix="tf-agent-out-") as tmp:
            try:
                self.sandbox.get_dir(self.task.output_dir, Path(tmp))
            except FileNotFoundError:
                return []
            found = {
                p.relative_to(tmp).as_posix()
                for pattern in self.task.outputs
                for p in Path(tmp).rglob(pattern)
                if p.is_file()
            }
        return sorted(found)

    def finish(
        self,
        status: Status,
        *,
        exhausted: Budget | None = None,
        error: str | None = None,
        failure: Failure | None = None,
    ) -> AgentResult:
        """Collect the answer's files, write the final trajectory, and return the result."""
        try:
            files = self.output_files()
        except SandboxError as exc:
            files = []
            status, error = "error", error or f"sandbox: cannot list the output: {exc}"
            failure = failure or "sandbox"
        result = AgentResult(
            status=status,
            exhausted=exhausted,
            error=error,
            failure=failure,
            output_dir=self.task.output_dir,
            files=files,
            steps=len(self.trajectory.steps),
            revisions=self.revisions,
            usage=self.usage,
            elapsed_s=self.elapsed(),
            trajectory_path=self.path,
        )
        self.trajectory.result = result
        write_trajectory(self.path, self.trajectory)
        log.info("agent run %s (%s): %d files", status, exhausted or error, len(files))
        return result
