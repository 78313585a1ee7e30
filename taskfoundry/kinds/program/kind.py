"""The program kind behind the `TaskKind` seam: each part is a stage function of this folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import docker

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.grading.task import evaluate_task, load_task
from taskfoundry.kinds.base import KindStage, Part, TaskKind, built
from taskfoundry.kinds.program.cleanroom.stage import start_state as cleanroom
from taskfoundry.kinds.program.filter.stage import filter_stage
from taskfoundry.kinds.program.lint import lint_stage
from taskfoundry.kinds.program.mutate.stage import mutation_stage
from taskfoundry.kinds.program.package import package_stage
from taskfoundry.kinds.program.testgen.stage import generate_stage

if TYPE_CHECKING:
    from taskfoundry.kinds.program.results import CleanroomStage, FilterStage, GenerateStage, LintStage
    from taskfoundry.kinds.program.settings import (
        CleanroomSettings,
        GenerateSettings,
        MutationSettings,
        PackageSettings,
    )
    from taskfoundry.pipeline.provenance import StageTimes
from taskfoundry.pipeline.results import BuildStage, SourceResult


class ProgramKind:
    """ProgramBench: the worker gets the executable (mode 0111) and its docs, and submits source
    and `compile.sh`; behavioral tests of the executable grade it, kept when they pass on gold
    three times and fail on every dummy, then measured (and strengthened) against mutants."""

    name: ClassVar[str] = "program"
    builds_program: ClassVar[bool] = True
    stages: ClassVar[Mapping[Part, KindStage]] = {
        "start_state": KindStage("cleanroom", cleanroom.__module__, docker_builds=True),
        "generate": KindStage("generate", generate_stage.__module__),
        "review": KindStage("lint", lint_stage.__module__),
        "validate": KindStage("filter", filter_stage.__module__),
        # it rebuilds the program mutant after mutant: it holds a Docker-build slot
        "strengthen": KindStage("mutation", mutation_stage.__module__, docker_builds=True),
    }

    review = staticmethod(lint_stage)
    validate = staticmethod(filter_stage)

    @staticmethod
    def start_state(
        src: SourceResult, build: BuildStage | None, settings: CleanroomSettings, client: docker.DockerClient
    ) -> CleanroomStage:
        return cleanroom(src, built(build), settings, client)

    @staticmethod
    def generate(
        src: SourceResult,
        build: BuildStage | None,
        start: CleanroomStage,
        settings: GenerateSettings,
        client: docker.DockerClient,
    ) -> GenerateStage:
        return generate_stage(src, built(build), start, settings, client)

    @staticmethod
    def strengthen(
        src: SourceResult,
        build: BuildStage | None,
        start: CleanroomStage,
        suite: GenerateStage,
        review: LintStage,
        verdict: FilterStage,
        settings: MutationSettings,
        client: docker.DockerClient,
    ) -> tuple[GenerateStage, FilterStage]:
        return mutation_stage(src, built(build), start, suite, review, verdict, settings, client)

    @staticmethod
    def package(
        src: SourceResult,
        build: BuildStage | None,
        start: CleanroomStage,
        suite: GenerateStage,
        review: LintStage,
        verdict: FilterStage,
        settings: PackageSettings,
        client: docker.DockerClient,
        times: StageTimes,
    ) -> list[Path]:
        """One task per source: the package stage's directory."""
        return [package_stage(src, built(build), start, suite, review, verdict, settings, client, times)]

    def grade(
        self,
        task_dir: Path,
        submission: Path,
        config: EvalConfig,
        client: docker.DockerClient,
        solution_branch: str,
    ) -> EvaluationResult:
        return evaluate_task(load_task(task_dir), submission, config, client, solution_branch)


if TYPE_CHECKING:  # mypy checks that the program kind fits the seam
    _fits: TaskKind[CleanroomStage, GenerateStage, LintStage, FilterStage] = ProgramKind()
