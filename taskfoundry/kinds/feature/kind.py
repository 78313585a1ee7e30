"""The feature kind (FeatureBench / ACE-Bench) behind the `TaskKind` seam.

The worker gets the repository with a feature removed (level 1) or only its interface
(level 2); the repository's own tests grade it: fail-to-pass tests that fail on the
stripped repository and pass with the reference, pass-to-pass tests that pass on both.
Many tasks per source: one per F2P test file that survives, at each level.

Parts: start_state = the environment (`env.py`: test dependencies in an image, one run
of the suite), generate = candidates, trace and extraction (`generate.py`), review = the
static gates (`review.py`), validate = the stripped and restored runs (`validate.py`),
package (`package.py`), grade (`grade.py`, the shared harness).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import docker

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.kinds.base import KindStage, Part, TaskKind, unchanged
from taskfoundry.kinds.feature.env import environment_stage
from taskfoundry.kinds.feature.generate import generate_stage
from taskfoundry.kinds.feature.grade import grade_feature
from taskfoundry.kinds.feature.package import package_stage
from taskfoundry.kinds.feature.review import review_stage
from taskfoundry.kinds.feature.validate import validate_stage

if TYPE_CHECKING:
    from taskfoundry.kinds.feature.results import CandidatesStage, EnvStage, ReviewStage, VerdictStage


class FeatureKind:
    name: ClassVar[str] = "feature"
    builds_program: ClassVar[bool] = False  # the environment stage installs the repo and its test deps
    stages: ClassVar[Mapping[Part, KindStage]] = {
        "start_state": KindStage("environment", environment_stage.__module__, docker_builds=True),
        "generate": KindStage("trace", generate_stage.__module__),
        "review": KindStage("review", review_stage.__module__),
        "validate": KindStage("validate", validate_stage.__module__),
    }

    start_state = staticmethod(environment_stage)
    generate = staticmethod(generate_stage)
    review = staticmethod(review_stage)
    validate = staticmethod(validate_stage)
    strengthen = staticmethod(unchanged)  # declares no strengthen stage: the suite is the repo's own
    package = staticmethod(package_stage)

    def grade(
        self,
        task_dir: Path,
        submission: Path,
        config: EvalConfig,
        client: docker.DockerClient,
        solution_branch: str = "submission",
    ) -> EvaluationResult:
        return grade_feature(task_dir, submission, config, client, solution_branch)


if TYPE_CHECKING:  # mypy checks that the feature kind fits the seam
    _fits: TaskKind[EnvStage, CandidatesStage, ReviewStage, VerdictStage] = FeatureKind()
