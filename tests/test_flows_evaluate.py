"""The evaluate flow runs the evaluator as a task and publishes its scores as artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker  # the evaluator opens an engine client even for no tasks


def test_evaluate_flow_publishes_a_score_table(
    tmp_path: Path, prefect_harness: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_eval_unit import make_task

    from taskfoundry.flows.artifacts import read_artifacts
    from taskfoundry.flows.evaluate import evaluate_flow
    from taskfoundry.kinds import registry

    # one task, graded by a kind that resolves everything (an empty run is an error: issue 59)
    task_dir = make_task(tmp_path / "tasks")
    text = (task_dir / "task.yaml").read_text().replace("kind: program", "kind: recording")
    (task_dir / "task.yaml").write_text(text if "kind: recording" in text else text + "kind: recording\n")
    monkeypatch.setitem(registry.KINDS, "recording", "test_eval_unit:_RecordingKind")
    (tmp_path / "run-1" / task_dir.name).mkdir(parents=True)
    (tmp_path / "run-1" / task_dir.name / "submission.tar.gz").write_bytes(b"\x1f\x8b")
    summary = evaluate_flow(tmp_path / "run-1", tmp_path / "tasks")
    assert [t.task_id for t in summary.tasks] == [task_dir.name]
    assert (tmp_path / "run-1" / "summary.json").exists()
    found = read_artifacts(["evaluate-run-1-summary", "evaluate-run-1-summary-report"])
    assert {a.key for a in found} == {"evaluate-run-1-summary", "evaluate-run-1-summary-report"}
    table = next(a.data for a in found if a.key == "evaluate-run-1-summary")
    assert json.loads(table) if isinstance(table, str) else table
