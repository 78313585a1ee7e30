"""Prefect artifacts: what each flow run shows on the dashboard, under stable keys.

Keys (lowercase letters, digits, dashes; a key reused by a later run is a new version):
  task-<task id>            table: one task's tests, drops, coverage, lint, triage, leak, times
  task-<task id>-report     markdown: the same as prose
  <flow>-progress           progress: sources finished / total, while a batch runs
  <flow>-summary            table: one row per source (built, skipped, failed, cancelled)
  <flow>-summary-report     markdown: counts and every failure with its stage and log
  catalog                   table: every task of the output folder (kind, language, difficulty,
                            tests, coverage, mutation score); refreshed by build-many and refresh
  catalog-<release name>    the same for a release (`taskfoundry tasks RELEASE --publish`)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast
from uuid import UUID

from prefect.artifacts import (
    create_link_artifact,
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey
from prefect.client.schemas.objects import Artifact
from prefect.client.schemas.sorting import ArtifactSort

from taskfoundry.catalog import Catalog
from taskfoundry.catalog.card import CardSummary, catalog_rows
from taskfoundry.flows.html_report import write_report
from taskfoundry.flows.report import markdown_report, read_facts, run_markdown, run_table, task_table
from taskfoundry.flows.summary import RunSummary
from taskfoundry.models import TaskYaml, load_yaml_model

MAX_KEY = 60


def artifact_key(*parts: str) -> str:
    """A valid artifact key: lowercase, dashes for anything else, short."""
    key = re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")
    return key[:MAX_KEY].rstrip("-")


def publish_task(task_dir: Path, cached: dict[str, bool] | None = None) -> None:
    """The task's dashboard table, its markdown report, and its HTML report (written into its
    reports/ here) linked."""
    task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    facts = read_facts(task_dir)
    create_table_artifact(
        task_table(task, facts, cached),
        key=artifact_key("task", task.task_id),
        description=f"tests, coverage and stage times of {task.task_id}",
    )
    create_markdown_artifact(
        markdown_report(task, task_dir, facts),
        key=artifact_key("task", task.task_id) + "-report",
        description=f"report of {task.task_id}",
    )
    publish_html(write_report(task_dir), artifact_key("task", task.task_id) + "-html")


def publish_html(report: Path, key: str) -> None:
    """A link artifact to an HTML report on this machine (the dashboard shows no HTML itself)."""
    if report.is_file():
        create_link_artifact(
            report.resolve().as_uri(), link_text=str(report), key=key, description="HTML report"
        )


def publish_summary(summary: RunSummary) -> None:
    key = artifact_key(summary.flow, "summary")
    rows = run_table(summary) or [{"source": "", "status": "no sources"}]
    create_table_artifact(rows, key=key, description=f"one row per source of this {summary.flow} run")
    create_markdown_artifact(run_markdown(summary), key=key + "-report")


def publish_catalog(cat: Catalog, name: str | None = None, where: str = "") -> str:
    """The catalog as a table artifact (a row per task); returns its key."""
    key = artifact_key("catalog", name) if name else "catalog"
    s = CardSummary.of(cat)
    rows = catalog_rows(cat) or [{"task": "", "kind": "no tasks"}]
    what = f"release {name}" if name else "the built tasks"
    description = (
        f"{what}{f' in {where}' if where else ''}: {s.tasks} tasks, {s.tests} tests; "
        f"line coverage {s.coverage.text()}; mutation score {s.mutation_score.text()}"
    )
    create_table_artifact(rows, key=key, description=description)
    return key


class ProgressArtifact:
    """A progress artifact of `done / total`, updated as sources finish."""

    def __init__(self, flow: str, total: int) -> None:
        self.total = total
        self.done = 0
        made = create_progress_artifact(
            0.0, key=artifact_key(flow, "progress"), description=f"0 of {total} sources finished"
        )
        self.id = cast(UUID, made)

    def advance(self) -> None:
        self.done += 1
        percent = 100.0 * self.done / self.total if self.total else 100.0
        update_progress_artifact(
            self.id, percent, description=f"{self.done} of {self.total} sources finished"
        )


def read_artifacts(keys: list[str] | None = None, flow_run_id: UUID | None = None) -> list[Artifact]:
    """Artifacts of the current API (newest first), by key and/or flow run: for scripts and tests.

    Posts the filter itself: the client's `read_artifacts` sends nulls for the filters
    left out, which this server version rejects (and empty run filters exclude the
    artifacts of flows)."""
    artifacts = ArtifactFilter()
    if keys is not None:
        artifacts.key = ArtifactFilterKey(any_=keys)
    if flow_run_id is not None:
        artifacts.flow_run_id = ArtifactFilterFlowRunId(any_=[flow_run_id])
    body = {
        "artifacts": artifacts.model_dump(mode="json", exclude_unset=True),
        "sort": ArtifactSort.CREATED_DESC.value,
        "limit": 200,
        "offset": 0,
    }
    with get_client(sync_client=True) as client:
        response = client.request("POST", "/artifacts/filter", json=body)
    return Artifact.model_validate_list(response.json())
