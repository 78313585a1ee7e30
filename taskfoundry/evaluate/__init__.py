"""The evaluator: grade submissions (a workspace tarball with `compile.sh`) against tasks."""

from taskfoundry.evaluate.models import EvalSummary, EvaluationResult, TaskScore, TestResult
from taskfoundry.evaluate.run import evaluate_run
from taskfoundry.evaluate.task import evaluate_task, load_task
from taskfoundry.harness.config import EvalConfig

__all__ = [
    "EvalConfig",
    "EvalSummary",
    "EvaluationResult",
    "TaskScore",
    "TestResult",
    "evaluate_run",
    "evaluate_task",
    "load_task",
]
