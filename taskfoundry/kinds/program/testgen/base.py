"""The Generator protocol: one run writes one branch of the hidden suite."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from taskfoundry.builders.recipe import Recipe
from taskfoundry.dotted import choose
from taskfoundry.errors import ConfigError
from taskfoundry.kinds.program.results import OriginCount
from taskfoundry.kinds.program.settings import GeneratorSettings
from taskfoundry.kinds.program.testgen.probes import Probe
from taskfoundry.kinds.program.testgen.replay import ReplayTable
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import Sandbox


@dataclass(frozen=True)
class GenerationContext:
    """What a generator may use. The sandbox is a container of the build image:
    /src (the repository, built), /cov (coverage build), /task/gold/executable,
    /task/cov/executable; it has no network."""

    sandbox: Sandbox
    repo: Path  # the checkout on the host
    program: str
    recipe: Recipe
    go_module: str
    log_dir: Path  # probe logs, trajectories
    config: GeneratorSettings
    usage: dict[str, str] = field(default_factory=dict)  # help text by command ('' top level)
    exclude: tuple[str, ...] = ()  # path prefixes that are not first-party (vendored, gnulib)
    harvested: tuple[Probe, ...] = ()  # the project's own tests' calls (testgen.harvest)
    argv0: str = WORKSPACE_EXECUTABLE  # what the program is called as (cleanroom.called_as)
    public_view: Path | None = None  # the cleanroom's workspace on the host: what a worker reads
    replay: ReplayTable | None = None  # the filter's replay dummy's table (testgen.replay_record)


@dataclass
class GeneratedBranch:
    name: str
    files: dict[str, str]  # test file name -> source (tfrun.py is added by the writer of the suite)
    tests: list[str]  # JUnit names, fixed when written
    covered: dict[str, set[int]] = field(default_factory=dict)
    total: dict[str, set[int]] = field(default_factory=dict)
    per_test_lines: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    probes_run: int = 0
    exhausted: str | None = None  # which budget ended the run, if one did
    seconds: float = 0.0
    slow_timeout: float | None = None  # the probe time a slow program was explored with
    origins: dict[str, OriginCount] = field(default_factory=dict)
    test_origins: dict[str, str] = field(default_factory=dict)  # JUnit name -> its probe's origin
    not_kept: dict[str, int] = field(default_factory=dict)  # probes not kept, by why (public_like, ...)
    seed: int | None = None  # the seed its random choices were drawn with (secret: reports only)


class Generator(Protocol):
    def generate(self, ctx: GenerationContext) -> GeneratedBranch:
        """Write one branch. Raise GenerationError when nothing usable can be written."""
        ...


# name -> "module:attribute", imported only when chosen
GENERATORS: dict[str, str] = {
    "explorer": "taskfoundry.kinds.program.testgen.explorer_gen:ExplorerGenerator",
    "agent": "taskfoundry.kinds.program.testgen.agent_gen:AgentGenerator",
}


def make_generator(name: str) -> Generator:
    cls = choose(GENERATORS, name, lambda known: ConfigError(f"unknown generator {name!r}; known: {known}"))
    generator: Generator = cls()
    return generator
