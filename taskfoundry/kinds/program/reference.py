"""The reference graded before it is packaged: through the real grader, as `eval` grades.

The filter runs the gold executable; the task ships `solution.tar.gz`, rebuilt by its
`compile.sh` in the cleanroom. The two can differ (figlet's reference printed `Not a FIGlet 2
font file` where the gold printed `character is too wide`): a test the reference fails is no
test of a rebuild, and a task whose reference cannot build is no task.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import docker

from taskfoundry import atomic
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.task import evaluate_task, load_task
from taskfoundry.models import TaskYaml, TestsJson, save_json, save_yaml

REFERENCE_FAILS = "reference_fails"


@dataclass(frozen=True)
class ReferenceGrade:
    error: str | None  # the grader's error (the reference did not build): no task
    failed: dict[str, str]  # test -> its status, for the tests the reference did not pass
    passed: int
    undefined: dict[str, str] = field(default_factory=dict)  # failed test -> UBSan's report (ub.py)

    def report(self) -> dict[str, object]:
        """reports/reference.json: the reference's grade before packaging."""
        return {
            "error": self.error,
            "passed": self.passed,
            "failed": self.failed,
            "undefined_behaviour": self.undefined,
        }


def grade_reference(
    task: TaskYaml,
    tests: TestsJson,
    suites: dict[str, bytes],
    solution: bytes,
    harness: EvalConfig,
    client: docker.DockerClient,
) -> ReferenceGrade:
    """Grade `solution` against the task as it would be packaged (`suites`: branch key ->
    tarball), in a directory of its own named as the task (the grader checks the name)."""
    with tempfile.TemporaryDirectory(prefix="tf-reference-") as tmp:
        task_dir = Path(tmp) / task.task_id
        save_yaml(task_dir / "task.yaml", task)
        save_json(task_dir / "tests.json", tests)
        for key, tarball in suites.items():
            atomic.write_bytes(task_dir / "tests" / f"{key}.tar.gz", tarball)
        atomic.write_bytes(task_dir / "solution.tar.gz", solution)
        spec = load_task(task_dir)
        result = evaluate_task(spec, task_dir / "solution.tar.gz", harness, client, "reference")
    if result.error_code:
        return ReferenceGrade(f"{result.error_code}: {(result.error_details or '')[:500]}", {}, 0)
    failed: dict[str, str] = {}
    passed = 0
    for key in spec.branches:
        for name in spec.expected(key):
            status = result.status_of(key, name)
            if status == "passed":
                passed += 1
            else:
                failed[name] = status
    return ReferenceGrade(None, failed, passed)
