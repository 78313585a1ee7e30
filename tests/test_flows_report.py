"""What the dashboard and `taskfoundry show` say, read from a task's files; CLI config merging."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry.cli import main, make_config, read_sources
from taskfoundry.config import Config
from taskfoundry.errors import ConfigError
from taskfoundry.flows.artifacts import artifact_key
from taskfoundry.flows.report import markdown_report, read_facts, run_markdown, run_table, task_table
from taskfoundry.flows.summary import RunRow, RunSummary
from taskfoundry.models import Images, TaskStats, TaskYaml, save_yaml


def _task_dir(tmp_path: Path) -> Path:
    stats = TaskStats(
        tests_generated=10,
        tests_kept=7,
        dropped={"dummy_pass": 2, "lint_high": 1},
        line_rate=0.5,
        lines_covered=5,
        lines_total=10,
        dummy_pass_rate=0.2,
        stage_seconds={"build": 3.0, "filter": 9.5},
    )
    task = TaskYaml(
        repository="o/r",
        commit="abcdef1234567",
        language="c",
        difficulty="easy",
        eval_clean_hashes=[],
        task_id="o__r.abcdef1",
        difficulty_score=0.5,
        source="/src",
        created_at=datetime(2025, 3, 4, tzinfo=UTC),
        executable="r",
        images=Images(task="n/o_1776_r.abcdef1:task", task_cleanroom="n/o_1776_r.abcdef1:task_cleanroom"),
        stats=stats,
    )
    task_dir = tmp_path / "o__r.abcdef1"
    save_yaml(task_dir / "task.yaml", task)
    (task_dir / "reports").mkdir()
    lint = {
        "findings": [{"severity": "HIGH"}, {"severity": "MED"}, {"severity": "HIGH"}],
        "assertions": [{"class": "observable"}, {"class": "recall"}],
    }
    (task_dir / "reports" / "lint.json").write_text(json.dumps(lint))
    (task_dir / "reports" / "leak.json").write_text(json.dumps({"verdict": "clean"}))
    assets = {"kept": [{"path": "tests/a.bin", "reason": "binary"}], "dropped": []}
    (task_dir / "reports" / "assets.json").write_text(json.dumps(assets))
    return task_dir


def test_task_table_has_every_figure_an_author_reads(tmp_path: Path) -> None:
    task_dir = _task_dir(tmp_path)
    from taskfoundry.models import load_yaml_model

    task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    table = {r["metric"]: r["value"] for r in task_table(task, read_facts(task_dir), {"build": True})}
    assert table["tests generated"] == "10" and table["tests kept"] == "7"
    assert table["dropped: dummy_pass"] == "2" and table["line coverage"] == "50.0%"
    assert table["dummy pass rate"] == "20.0%" and table["lint findings"] == "HIGH: 2, MED: 1"
    assert table["triage"] == "observable: 1, recall: 1" and table["leak scan"] == "clean"
    assert table["build time"] == "3.0 s (cached)" and table["filter time"] == "9.5 s"
    assert table["test assets"] == "1 kept, 0 dropped"
    text = markdown_report(task, task_dir)
    assert "**7 kept**" in text and "leak scan: clean" in text and "| filter | 9.5 s |" in text
    assert table["gold"] == "not checked" and "- gold: not checked" in text
    assert table["replay pass rate"] == "not measured"  # a task built before issue 55
    measured = task.model_copy(
        update={
            "stats": task.stats.model_copy(update={"replay_pass_rate": 0.0, "replay_pass_rate_before": 0.08})
        }
    )
    said = "0.0% of kept tests (8.0% before filtering)"
    assert {r["metric"]: r["value"] for r in task_table(measured, read_facts(task_dir))}[
        "replay pass rate"
    ] == said
    assert f"replay pass rate (the gold's outputs on public probes, replayed): {said}" in markdown_report(
        measured, task_dir
    )


@pytest.mark.parametrize(
    ("kind", "verdict", "shown"),
    [
        ("program", "sealed", "- gold: sealed"),
        ("program", "instrumentable", "- gold: **instrumentable**"),
        ("function", None, None),
    ],
)
def test_the_golds_integrity_is_in_show_and_on_the_dashboard(
    tmp_path: Path, kind: str, verdict: str | None, shown: str | None
) -> None:
    from taskfoundry.models import load_yaml_model

    task_dir = _task_dir(tmp_path)
    task = load_yaml_model(task_dir / "task.yaml", TaskYaml).model_copy(
        update={"kind": kind, "gold_integrity": verdict}
    )
    text = markdown_report(task, task_dir)
    table = {r["metric"]: r["value"] for r in task_table(task, read_facts(task_dir))}
    if shown is None:
        assert "- gold:" not in text and "gold" not in table
    else:
        assert shown in text and table["gold"] == verdict


def test_show_prints_the_summary_and_a_missing_task_is_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["show", str(_task_dir(tmp_path))])
    assert result.exit_code == 0 and "o__r.abcdef1" in result.output
    (tmp_path / "empty").mkdir()
    assert CliRunner().invoke(main, ["show", str(tmp_path / "empty")]).exit_code == 2


def test_artifact_keys_are_valid() -> None:
    assert artifact_key("task", "Local__CSVQ.f904ac5") == "task-local-csvq-f904ac5"
    assert len(artifact_key("task", "x" * 100)) <= 60


def test_run_summary_names_each_failure_with_its_stage_and_log() -> None:
    summary = RunSummary(
        flow="build-many",
        rows=[
            RunRow(source="a", status="built", task_id="o__a.1", tests_kept=3, line_rate=0.25),
            RunRow(source="b", status="failed", stage="build", error="boom", log=Path("/l/build.log")),
        ],
        budget_exceeded=True,
        max_failures=0.2,
    )
    rows = run_table(summary)
    assert rows[0]["coverage"] == "25.0%" and rows[0]["error"] == ""
    assert rows[1]["error"] == "build stage failed: boom (log: /l/build.log)"
    text = run_markdown(summary)
    assert "failure budget 0.2 exceeded" in text and "`b`: build stage failed: boom" in text


def test_flags_override_the_file_and_out_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("explorer: {seed: 3, max_probes: 5}\norchestration: {concurrency: 4}\n")
    config = make_config(
        tmp_path / "c.yaml",
        out=Path("rel"),
        explorer={"max_probes": 9, "seed": None},
        orchestration={"concurrency": None, "max_failures": 0.5},
    )
    assert config.out == tmp_path / "rel" and config.explorer.seed == 3
    assert config.explorer.max_probes == 9 and config.orchestration.concurrency == 4
    assert config.orchestration.max_failures == 0.5
    with pytest.raises(ConfigError, match="concurrency"):
        make_config(None, orchestration={"concurrency": 0})


def test_sources_come_from_arguments_and_files(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "list.txt").write_text(
        "a  # next to the list\n\n# comment\ncrate:ripgrep\nhttps://h/r.git#v1 # a tag\n"
    )
    assert read_sources(("x/y", str(tmp_path / "list.txt"))) == [
        "x/y",
        str(tmp_path / "a"),
        "crate:ripgrep",
        "https://h/r.git#v1",
    ]


def test_serve_offers_refresh_on_its_cron_and_the_other_flows() -> None:
    from taskfoundry.flows.serve import deployments

    config = Config.model_validate({"out": "/o", "orchestration": {"refresh": {"cron": "5 4 * * 1"}}})
    found = {d.name: d for d in deployments(config)}
    assert set(found) == {"refresh", "build", "build-many", "evaluate"}
    (schedule,) = found["refresh"].schedules
    assert schedule.schedule.cron == "5 4 * * 1"  # type: ignore[union-attr]
    assert found["build"].parameters["config"]["out"] == "/o"
