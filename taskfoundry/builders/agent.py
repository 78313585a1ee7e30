"""The agentic build fallback: when no recipe is detected and a model is configured, an agent
writes `build.sh` and `build-cov.sh` inside a build container, and each submit is verified
by running both scripts on clean copies of the repository.

The verified scripts become a Recipe (kind `agent`) that `run_build` builds like any other.
The run's trajectory is kept as `TaskNames.build_dir / "agent-build.json"`.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import docker
from pydantic import BaseModel, Field

from taskfoundry.agent import AgentConfig, AgentTask, Model, ModelConfig, Round, run_agent
from taskfoundry.builders import agent_prompts
from taskfoundry.builders.pick import c_language, source_files
from taskfoundry.builders.recipe import CoverageKind, Recipe
from taskfoundry.errors import BuildError
from taskfoundry.naming import TaskNames
from taskfoundry.sandbox.base import Sandbox, SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.sources import Checkout

log = logging.getLogger(__name__)
WORK = "/src"
PRISTINE = "/pristine"
SCRIPTS = ("build.sh", "build-cov.sh")  # what the agent writes: its answer


class BuildAgentConfig(BaseModel):
    """The build agent: which model, and its budgets. No model: no agent (detection only)."""

    model_config = {"extra": "forbid"}

    model: ModelConfig | None = Field(None, description="the model; None turns the agent off")
    agent: AgentConfig = Field(
        default_factory=lambda: AgentConfig(
            step_limit=30, cost_limit=2.0, time_limit=1800.0, bash_timeout=600.0, max_revisions=3
        ),
        description="step, cost and time budgets of one run",
    )
    memory_mb: int = Field(4096, description="memory of the build container")
    verify_timeout: float = Field(1200.0, description="seconds one verification build may take")


@dataclass(frozen=True)
class BuildAgent:
    """A model (built at the edge by `make_model`, or a ScriptedModel) and its config."""

    model: Model
    config: BuildAgentConfig


def agent_recipe(
    checkout: Checkout, image: str, client: docker.DockerClient, names: TaskNames, agent: BuildAgent
) -> Recipe:
    cfg = agent.config
    builddir = names.build_dir
    trajectory = builddir / "agent-build.json"
    limits = SandboxLimits(network=True, user="0:0", memory_mb=cfg.memory_mb, pids=2048)
    with DockerSandbox(image, limits, client=client) as box:
        _upload(box, checkout.path)
        verifier = Verifier(box, coverage_kind(checkout.path), cfg.verify_timeout)
        task = AgentTask(
            workdir=WORK,
            output_dir=WORK,
            outputs=list(SCRIPTS),
            system=agent_prompts.SYSTEM,
            prompt=agent_prompts.TASK,
        )
        result = run_agent(agent.model, box, task, cfg.agent, trajectory_path=trajectory, feedback=verifier)
        problems = verifier.problems if verifier.checked else verifier(None)
        if problems:
            why = f"{result.status}" + (
                f" ({result.exhausted or result.error})" if result.exhausted or result.error else ""
            )
            raise BuildError(
                f"no build system detected, and the build agent's scripts do "
                f"not work (agent {why}): {problems[0][:500]}",
                trajectory,
            )
        build, cov = (box.get_file(f"{WORK}/{n}").decode() for n in ("build.sh", "build-cov.sh"))
    language = _language(checkout.path)
    return Recipe(
        kind="agent",
        language=language,
        build=script_lines(build),
        coverage_build=script_lines(cov),
        executable="executable",
        coverage_executable="executable",
        coverage=verifier.kind,
    )


class Verifier:
    """The feedback hook: build both scripts on clean copies; problems go back to the agent."""

    def __init__(self, box: Sandbox, kind: CoverageKind, timeout: float) -> None:
        self.box, self.kind, self.timeout = box, kind, timeout
        self.problems: list[str] = []
        self.checked = False

    def __call__(self, _round: Round | None) -> list[str]:
        self.problems = [p for p in (self._try("build.sh", False), self._try("build-cov.sh", True)) if p]
        self.checked = _round is not None and not self.problems
        return self.problems

    def _try(self, script: str, instrumented: bool) -> str:
        where = f"/verify/{'cov' if instrumented else 'gold'}"
        check = {
            "gcov": "find . -name '*.gcno' | grep -q . || { echo 'no .gcno files: "
            "compile and link with --coverage' >&2; exit 1; }",
            "llvm": "grep -q __llvm_profile executable || { echo 'not built with "
            "-C instrument-coverage' >&2; exit 1; }",
        }.get(self.kind, "true")
        cmd = (
            f"test -f {WORK}/{script} || {{ echo '{script} is missing' >&2; exit 1; }}; "
            f"rm -rf {where} && mkdir -p /verify && cp -a {PRISTINE} {where} && "
            f"cp {WORK}/{script} {where}/ && cd {where} && sh -e ./{script} && "
            "test -x executable || { echo 'no ./executable after the build' >&2; exit 1; }; "
            + (check if instrumented else "true")
        )
        res = self.box.exec(cmd, timeout=self.timeout, workdir="/")
        if res.ok:
            return ""
        return f"{script} failed in a clean copy (exit {res.exit_code}):\n{res.text()[-3000:]}"


def script_lines(text: str) -> list[str]:
    """A script as recipe commands: without its shebang and `set -e` (build.sh adds them)."""
    lines = text.splitlines()
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    return [ln for ln in lines if ln.strip() not in ("set -e", "")]


def coverage_kind(repo: Path) -> CoverageKind:
    if any(source_files(repo, {".rs"})):
        return "llvm"
    if any(source_files(repo, {".go"})):
        return "go"
    return "gcov"


def _language(repo: Path) -> str:
    return {"llvm": "rust", "go": "go"}.get(coverage_kind(repo)) or c_language(repo)


def _upload(box: Sandbox, repo: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="tf-agent-src-") as tmp:
        copy = Path(tmp) / "src"
        shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        box.put_dir(copy, WORK)
    box.exec(f"cp -a {WORK} {PRISTINE}", timeout=600, workdir="/")
