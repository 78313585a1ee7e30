"""The function kind (Code2Bench) behind the `TaskKind` seam: the worker gets a signature and
docstring and submits the function's module; property-based cases (inputs + the reference's
outcomes) grade it. Many tasks per source, one per accepted function. Stages: see
../shared/KINDS.md and docs/kinds.md."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import docker

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.kinds.base import KindStage, Part, TaskKind, unchanged
from taskfoundry.kinds.function.cases import cases_stage
from taskfoundry.kinds.function.functions import functions_stage
from taskfoundry.kinds.function.gate import gate_stage
from taskfoundry.kinds.function.grade import grade_function
from taskfoundry.kinds.function.package import package_stage
from taskfoundry.kinds.function.review import review_stage

if TYPE_CHECKING:
    from taskfoundry.kinds.function.results import CasesStage, FunctionsStage, GateStage, ReviewStage


class FunctionKind:
    """Code2Bench: start_state = the functions (stages 1-3) and the sandbox image; generate =
    hypothesis inputs and the reference's outcomes; review = static checks of the cases;
    validate = the gate (coverage, determinism, trivial bodies, mutants)."""

    name: ClassVar[str] = "function"
    builds_program: ClassVar[bool] = False  # no gold executable: the shared build stage is skipped
    stages: ClassVar[Mapping[Part, KindStage]] = {
        "start_state": KindStage("functions", functions_stage.__module__, docker_builds=True),
        "generate": KindStage("cases", cases_stage.__module__),
        "review": KindStage("review", review_stage.__module__),
        "validate": KindStage("gate", gate_stage.__module__),
    }

    start_state = staticmethod(functions_stage)
    generate = staticmethod(cases_stage)
    review = staticmethod(review_stage)
    validate = staticmethod(gate_stage)
    strengthen = staticmethod(unchanged)  # no strengthen stage (yet): what the gate kept is packaged
    package = staticmethod(package_stage)

    def grade(
        self,
        task_dir: Path,
        submission: Path,
        config: EvalConfig,
        client: docker.DockerClient,
        solution_branch: str,
    ) -> EvaluationResult:
        return grade_function(task_dir, submission, config, client, solution_branch)


if TYPE_CHECKING:  # mypy checks that the function kind fits the seam
    _fits: TaskKind[FunctionsStage, CasesStage, ReviewStage, GateStage] = FunctionKind()
