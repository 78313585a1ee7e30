"""The two ways to drive a worker: the project's model loop, or an external agent's command.

Each runs in a prepared `WorkerBox` and returns an `Outcome`; neither raises on the agent's
own failure (a model error, a command that exits non-zero, a budget spent): those are end
reasons. A SandboxError (infrastructure) propagates.
"""

from __future__ import annotations

import json
import tarfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field, ValidationError

from taskfoundry import atomic
from taskfoundry.agent.config import make_model
from taskfoundry.agent.loop import run_agent
from taskfoundry.agent.model import Model
from taskfoundry.agent.prompts import load_template
from taskfoundry.agent.schema import AgentConfig, AgentResult, AgentTask
from taskfoundry.agent.tools import truncate
from taskfoundry.errors import SandboxError
from taskfoundry.solve.config import SolveConfig
from taskfoundry.solve.container import AGENT_DIR, PROMPT_PATH, WorkerBox
from taskfoundry.solve.records import TRAJECTORY, EndReason
from taskfoundry.solve.view import TEMPLATES

BUDGET_REASONS: dict[str, EndReason] = {"steps": "step_limit", "cost": "cost_limit", "time": "time_limit"}
COMMAND_OUTPUT = 200_000  # characters of an external agent's output kept in its trajectory
STATS_PATH = "/tmp/tf-agent-stats.json"  # $TF_STATS: where a command may report its usage


class CommandStats(BaseModel):
    """What an external agent says it used (its own word: the loop cannot count for it)."""

    steps: int = Field(0, ge=0)
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0)


@dataclass
class Outcome:
    end_reason: EndReason
    error: str | None = None
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    notes: list[str] = field(default_factory=list)


class Driver(Protocol):
    def run(self, box: WorkerBox, out_dir: Path) -> Outcome:
        """Work on the task in `box`; the trajectory goes to `out_dir`."""
        ...


class ModelDriver:
    """The agent loop (`agent.run_agent`) with bash in the worker's container and `submit`."""

    def __init__(self, model: Model, config: SolveConfig) -> None:
        self.model = model
        self.config = config

    @classmethod
    def from_config(cls, config: SolveConfig, environ: Mapping[str, str]) -> ModelDriver:
        assert config.model is not None
        return cls(make_model(config.model, environ), config)

    def run(self, box: WorkerBox, out_dir: Path) -> Outcome:
        view, cfg = box.view, self.config
        task = AgentTask(
            workdir=view.workspace,
            output_dir=view.workspace,
            system=load_template(TEMPLATES, "system.md"),
            prompt=load_template(TEMPLATES, "task.md"),
            variables=view.prompt_variables(),
        )
        budgets = AgentConfig(
            step_limit=cfg.step_limit,
            cost_limit=cfg.cost_limit,
            time_limit=cfg.time_limit,
            bash_timeout=cfg.bash_timeout,
            max_revisions=0,
        )
        result = run_agent(self.model, box, task, budgets, trajectory_path=out_dir / TRAJECTORY)
        return _outcome(result)


def _outcome(result: AgentResult) -> Outcome:
    usage = result.usage
    reason: EndReason = "done"
    if result.status == "exhausted":
        reason = BUDGET_REASONS[result.exhausted or "steps"]
    elif result.status == "error":
        reason = "model_error" if result.failure == "model" else "sandbox_error"
    return Outcome(
        end_reason=reason,
        error=result.error,
        steps=result.steps,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=usage.cost_usd,
    )


class CommandDriver:
    """An external agent: one shell command, run as the worker in the workspace, under the
    time limit. It finds the task text at $TF_PROMPT and its own files (`agent_dir`) at /agent."""

    def __init__(self, command: str, config: SolveConfig) -> None:
        self.command = command
        self.config = config

    def run(self, box: WorkerBox, out_dir: Path) -> Outcome:
        limit = self.config.time_limit or 24 * 3600.0
        started = time.monotonic()
        res = box.exec(self.command, timeout=limit, env={"TF_STATS": STATS_PATH})
        reason: EndReason = "time_limit" if res.timed_out else "done" if res.exit_code == 0 else "agent_error"
        trajectory = {
            "schema_version": 1,
            "driver": "command",
            "command": self.command,
            "prompt": PROMPT_PATH,
            "agent_dir": AGENT_DIR if self.config.agent_dir else None,
            "started_at": datetime.now(UTC).isoformat(),
            "exit_code": res.exit_code,
            "timed_out": res.timed_out,
            "seconds": round(time.monotonic() - started, 3),
            "stdout": truncate(res.stdout.decode(errors="replace"), COMMAND_OUTPUT),
            "stderr": truncate(res.stderr.decode(errors="replace"), COMMAND_OUTPUT),
        }
        atomic.write_text(out_dir / TRAJECTORY, json.dumps(trajectory, indent=1))
        error = None if reason == "done" else f"exit code {res.exit_code}"
        stats = _stats(box)
        return Outcome(
            end_reason=reason,
            error=error,
            steps=stats.steps,
            input_tokens=stats.input_tokens,
            output_tokens=stats.output_tokens,
            cost_usd=stats.cost_usd,
        )


def _stats(box: WorkerBox) -> CommandStats:
    """The command's report at $TF_STATS; none, or one that does not parse, counts as zero."""
    try:
        return CommandStats.model_validate_json(box.bounded_file(STATS_PATH, box.isolation.stats_bytes))
    except (FileNotFoundError, ValidationError, SandboxError, tarfile.TarError, ValueError):
        return CommandStats()
