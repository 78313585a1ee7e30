"""The agent's config and task, and the versioned records a run writes (result, trajectory)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from taskfoundry import atomic
from taskfoundry.agent.model import Message, Turn, Usage

#: Version of the trajectory file format; bump on an incompatible change.
TRAJECTORY_SCHEMA_VERSION = 2  # 2: AgentTask carries its prompts; output_dir/files

Budget = Literal["steps", "cost", "time"]
Status = Literal["submitted", "exhausted", "error"]
Failure = Literal["model", "sandbox"]


class AgentConfig(BaseModel):
    """Budgets and limits of one agent run. A budget of None is unlimited."""

    model_config = {"extra": "forbid"}

    step_limit: int | None = Field(default=50, ge=1, description="model calls before the run stops")
    cost_limit: float | None = Field(default=5.0, gt=0, description="USD spent before the run stops")
    time_limit: float | None = Field(default=3600.0, gt=0, description="wall-clock seconds for the run")
    bash_timeout: float = Field(default=120.0, gt=0, description="seconds one bash command may run")
    output_limit: int = Field(default=10_000, ge=200, description="characters of tool output shown")
    max_revisions: int = Field(default=3, ge=0, description="feedback rounds after a submit")


class AgentTask(BaseModel):
    """What one run works on: a directory whose files are the answer, and the prompts.

    The prompts are `string.Template`s (`$$` is a literal dollar sign) filled with
    `variables` plus `workdir`, `output_dir`, `instructions` and `tools` (a bullet list of
    the tools offered). The caller writes them: the loop knows nothing of what is asked."""

    workdir: str = Field(description="sandbox directory bash commands start in")
    output_dir: str = Field(description="sandbox directory the agent leaves its answer in")
    outputs: list[str] = Field(
        default_factory=lambda: ["*"], description="glob patterns of the answer's files in output_dir"
    )
    system: str = Field(description="the system prompt (a template)")
    prompt: str = Field(description="the task prompt (a template)")
    variables: dict[str, str] = Field(default_factory=dict, description="values for the templates")
    instructions: str = Field(default="", description="extra instructions, `$instructions` in a prompt")


class Observation(BaseModel):
    """What one tool call returned to the model."""

    tool_call_id: str
    tool: str
    output: str
    is_error: bool = False

    def message(self) -> Message:
        """The tool-result message that carries this observation back to the model."""
        return Message(
            role="tool", content=self.output, tool_call_id=self.tool_call_id, is_error=self.is_error
        )


class Step(BaseModel):
    """One model call and what came of it."""

    index: int
    turn: Turn
    observations: list[Observation] = Field(default_factory=list)
    feedback: list[str] = Field(default_factory=list, description="revision requests after it")
    usage_total: Usage = Field(description="usage of the run up to and including this step")
    elapsed_s: float


class AgentResult(BaseModel):
    """How a run ended, and the files it left in `output_dir`."""

    status: Status
    exhausted: Budget | None = Field(default=None, description="the budget that ended the run")
    error: str | None = None
    failure: Failure | None = Field(default=None, description="with status error: what failed")
    output_dir: str
    files: list[str] = Field(default_factory=list, description="answer files, relative to output_dir")
    steps: int = 0
    revisions: int = 0
    usage: Usage = Field(default_factory=Usage)
    elapsed_s: float = 0.0
    trajectory_path: Path | None = None


class Trajectory(BaseModel):
    """Everything a run did; rewritten (atomically) after every step."""

    schema_version: int = TRAJECTORY_SCHEMA_VERSION
    model: str
    started_at: datetime
    task: AgentTask
    config: AgentConfig
    messages: list[Message] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    result: AgentResult | None = None


def write_trajectory(path: Path, trajectory: Trajectory) -> None:
    """Write the trajectory atomically (temp file in the same directory, then `os.replace`)."""
    atomic.write_text(path, trajectory.model_dump_json(indent=1))


def read_trajectory(path: Path) -> Trajectory:
    return Trajectory.model_validate_json(path.read_text(encoding="utf-8"))
