"""The task-kind seam: the parts of the pipeline that differ by kind of task.

The flow runs, for every kind: source -> build (shared) -> start_state -> generate ->
review -> validate -> strengthen (each a cached stage, keyed on its config section and its
module's code; strengthen only when the kind declares it) -> package. `grade` scores a
submission against a finished task. What each part returns is the kind's own result model
(the program kind: the cleanroom, the suite, the lint and filter reports); the flow only
passes them along."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, TypeVar

import docker
from pydantic import BaseModel

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.kinds.registry import load_kind
from taskfoundry.pipeline.provenance import StageTimes
from taskfoundry.pipeline.results import BuildStage, SourceResult

Part = Literal["start_state", "generate", "review", "validate", "strengthen"]
PARTS: tuple[Part, ...] = ("start_state", "generate", "review", "validate", "strengthen")

StartT = TypeVar("StartT", bound=BaseModel)
SuiteT = TypeVar("SuiteT", bound=BaseModel)
ReviewT = TypeVar("ReviewT", bound=BaseModel)
VerdictT = TypeVar("VerdictT", bound=BaseModel)


@dataclass(frozen=True)
class KindStage:
    """How the flow runs one part as a cached stage."""

    name: str  # what the dashboard and the progress bars call it
    module: str  # where the part's code is: its code key covers this module's imports
    docker_builds: bool = False  # holds a Docker-build slot while it runs


class TaskKind(Protocol[StartT, SuiteT, ReviewT, VerdictT]):
    """A kind of task: what the worker starts from, how the hidden suite is made and checked,
    what the task directory holds, and how a submission is graded."""

    name: ClassVar[str]
    stages: ClassVar[Mapping[Part, KindStage]]
    # False: no program to build (a library): the shared build stage is skipped, `build` is None
    builds_program: ClassVar[bool]

    def start_state(
        self, src: SourceResult, build: BuildStage | None, settings: Any, client: docker.DockerClient
    ) -> StartT:
        """What the worker gets, with everything else stripped (the program kind: the
        cleanroom image, leak-scanned)."""
        ...

    def generate(
        self,
        src: SourceResult,
        build: BuildStage | None,
        start: StartT,
        settings: Any,
        client: docker.DockerClient,
    ) -> SuiteT:
        """The hidden suite (one branch)."""
        ...

    def review(self, suite: SuiteT) -> ReviewT:
        """Static checks of the suite, before anything runs (the program kind: the linter)."""
        ...

    def validate(
        self, suite: SuiteT, review: ReviewT, start: StartT, settings: Any, client: docker.DockerClient
    ) -> VerdictT:
        """What the suite keeps once run against the reference and what must fail it."""
        ...

    def strengthen(
        self,
        src: SourceResult,
        build: BuildStage | None,
        start: StartT,
        suite: SuiteT,
        review: ReviewT,
        verdict: VerdictT,
        settings: Any,
        client: docker.DockerClient,
    ) -> tuple[SuiteT, VerdictT]:
        """The validated suite measured and made stronger (the program kind: mutation analysis,
        then tests that kill survivors); returns the suite and verdict to package. Run only
        when `stages` declares it; a kind with nothing to add uses `unchanged`."""
        ...

    def package(
        self,
        src: SourceResult,
        build: BuildStage | None,
        start: StartT,
        suite: SuiteT,
        review: ReviewT,
        verdict: VerdictT,
        settings: Any,
        client: docker.DockerClient,
        times: StageTimes,
    ) -> list[Path]:
        """Write the source's task directories, each atomically; returns them (the program
        kind: one; the function and feature kinds: one per accepted function or feature,
        possibly none). `settings` is the kind's package section (`taskfoundry.sections`)."""
        ...

    def grade(
        self,
        task_dir: Path,
        submission: Path,
        config: EvalConfig,
        client: docker.DockerClient,
        solution_branch: str,
    ) -> EvaluationResult:
        """Score a submission against the task in `task_dir` (its `task.yaml` names this kind).
        A verdict on the submission is an `error_code` or failing tests; infrastructure
        failures raise SandboxError, which `taskfoundry eval` retries."""
        ...


def unchanged(
    src: SourceResult,
    build: BuildStage | None,
    start: object,
    suite: SuiteT,
    review: object,
    verdict: VerdictT,
    settings: object,
    client: docker.DockerClient,
) -> tuple[SuiteT, VerdictT]:
    """`strengthen` of a kind that does not strengthen its suites (and declares no such stage)."""
    return suite, verdict


def built(build: BuildStage | None) -> BuildStage:
    """The build of a kind that builds its program (`builds_program`): the flow always runs the
    build stage for one, so None here is a fault of the caller."""
    if build is None:
        raise TypeError("a kind that builds its program was handed no build")
    return build


def make_kind(name: str) -> TaskKind[Any, Any, Any, Any]:
    """The kind called `name`: an unknown name is a ConfigError listing the kinds."""
    kind: TaskKind[Any, Any, Any, Any] = load_kind(name)
    return kind
