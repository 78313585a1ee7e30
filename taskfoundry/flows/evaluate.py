"""The evaluate flow: grade a run directory of submissions against the tasks, on the dashboard.

The grading is `taskfoundry.evaluate.evaluate_run` (one error record per bad task,
never a crashed run); this flow runs it as a task and publishes its scores.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from taskfoundry.evaluate.run import evaluate_run
from taskfoundry.flows import names
from taskfoundry.flows.artifacts import artifact_key, publish_html
from taskfoundry.flows.html_report import write_report
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.models import EvalSummary
from taskfoundry.grading.summary import summary_text


@task(name="evaluate-run")
def evaluate_run_task(run_dir: Path, tasks_dir: Path, config: EvalConfig) -> EvalSummary:
    return evaluate_run(run_dir, tasks_dir, config)


def score_rows(summary: EvalSummary) -> list[dict[str, object]]:
    return [
        {
            "task": s.task_id,
            "tests": s.tests,
            "passed": s.passed,
            "pass_rate": f"{s.pass_rate:.1%}",
            "resolved": s.resolved,
            "near_resolved": s.near_resolved,
            "error": s.error_code or "",
            "infrastructure": s.infra_error,
        }
        for s in summary.tasks
    ]


@flow(name="evaluate", flow_run_name=names.evaluate_name, log_prints=False)
def evaluate_flow(run_dir: Path, tasks_dir: Path, config: EvalConfig | None = None) -> EvalSummary:
    """Grade `run_dir/<task id>/submission.tar.gz` against every task under `tasks_dir`."""
    summary = evaluate_run_task(run_dir, tasks_dir, config or EvalConfig())
    key = artifact_key("evaluate", run_dir.name, "summary")
    create_table_artifact(
        score_rows(summary) or [{"task": "", "error": "no tasks"}],
        key=key,
        description=f"scores of {run_dir}",
    )
    create_markdown_artifact(
        f"# evaluation of `{run_dir}`\n\n```\n{summary_text(summary)}\n```\n", key=key + "-report"
    )
    publish_html(write_report(run_dir), key + "-html")
    return summary
