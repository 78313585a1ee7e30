"""The solve package without Docker: the driver spec, the worker's view per kind, the report."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from taskfoundry.agent.model import Usage
from taskfoundry.agent.schema import AgentResult
from taskfoundry.cli import main
from taskfoundry.errors import ConfigError
from taskfoundry.solve.batch import read_report, select_tasks, summary_markdown, write_report
from taskfoundry.solve.config import SolveConfig, model_config_of
from taskfoundry.solve.drivers import _outcome
from taskfoundry.solve.records import RunRow
from taskfoundry.solve.view import load_view


def write_task(root: Path, task_id: str, kind: str, language: str = "python", **extra: object) -> Path:
    """A task directory with the files a worker's view reads, and hidden files it must not."""
    task_dir = root / task_id
    (task_dir / "tests").mkdir(parents=True)
    fields = {
        "repository": "o/r",
        "commit": "0" * 40,
        "language": language,
        "difficulty": "easy",
        "eval_clean_hashes": [],
        "kind": kind,
        "task_id": task_id,
        "difficulty_score": 1.0,
        "source": "/src",
        "created_at": datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
        "executable": "candidate.py" if kind == "function" else "executable",
        "images": {"task": f"ns/{task_id}:task", "task_cleanroom": f"ns/{task_id}:task_cleanroom"},
        **extra,
    }
    (task_dir / "task.yaml").write_text(yaml.safe_dump(fields))
    (task_dir / "tests.json").write_text('{"branches": {}}')
    (task_dir / "tests" / "b.tar.gz").write_bytes(b"HIDDEN-TESTS")
    (task_dir / "solution.tar.gz").write_bytes(b"HIDDEN-REFERENCE")
    if kind != "program":
        (task_dir / "prompt.md").write_text(f"# Implement `{task_id}`\nsignature and docstring\n")
    return task_dir


def test_model_spec_names_provider_and_model() -> None:
    cfg = model_config_of("anthropic:claude-x", price="3,15")
    assert (cfg.provider, cfg.model, cfg.price().output_per_mtok) == ("anthropic", "claude-x", 15)
    assert model_config_of("openai:gpt-x").price().input_per_mtok == 0
    for bad in ("gpt-x", "mistral:m", "openai:"):
        with pytest.raises(ConfigError):
            model_config_of(bad)
    with pytest.raises(ConfigError):
        model_config_of("openai:m", price="cheap")


def test_exactly_one_driver() -> None:
    with pytest.raises(ValueError):
        SolveConfig()
    with pytest.raises(ValueError):
        SolveConfig(model=model_config_of("openai:m"), agent_command="true")
    assert SolveConfig(agent_command="true").driver == "command"
    assert SolveConfig(model=model_config_of("openai:m")).driver == "openai:m"


@pytest.mark.parametrize("kind", ["program", "function", "feature"])
def test_view_is_the_start_image_and_the_task_text_only(tmp_path: Path, kind: str) -> None:
    view = load_view(write_task(tmp_path, f"t-{kind}", kind, language="c"))
    assert view.image == f"ns/t-{kind}:task_cleanroom"
    assert view.workspace == "/workspace"
    assert "HIDDEN" not in view.task_text
    if kind == "program":
        assert "compile.sh" in view.task_text and "in c" in view.task_text
    else:
        assert view.task_text.startswith(f"# Implement `t-{kind}`")
    if kind == "function":
        assert "candidate.py" in view.answer


def test_unknown_kind_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no worker view"):
        load_view(write_task(tmp_path, "t", "other"))


def test_select_by_kind_language_and_limit(tmp_path: Path) -> None:
    write_task(tmp_path, "a", "function")
    write_task(tmp_path, "b", "program", language="c")
    write_task(tmp_path, "c", "function")
    assert [p.name for p in select_tasks(tmp_path, kind="function")] == ["a", "c"]
    assert [p.name for p in select_tasks(tmp_path, language="c")] == ["b"]
    assert [p.name for p in select_tasks(tmp_path, limit=2)] == ["a", "b"]


@pytest.mark.parametrize(
    ("status", "exhausted", "failure", "reason"),
    [
        ("submitted", None, None, "done"),
        ("exhausted", "steps", None, "step_limit"),
        ("exhausted", "cost", None, "cost_limit"),
        ("exhausted", "time", None, "time_limit"),
        ("error", None, "model", "model_error"),
        ("error", None, "sandbox", "sandbox_error"),
    ],
)
def test_end_reasons_from_the_loop(
    status: str, exhausted: str | None, failure: str | None, reason: str
) -> None:
    result = AgentResult.model_validate(
        {"status": status, "exhausted": exhausted, "failure": failure, "output_dir": "/w", "steps": 3}
    )
    result.usage = Usage(input_tokens=5, output_tokens=7, cost_usd=0.5)
    outcome = _outcome(result)
    assert (outcome.end_reason, outcome.steps, outcome.input_tokens, outcome.cost_usd) == (reason, 3, 5, 0.5)


def row(task: str, kind: str, resolved: bool) -> RunRow:
    return RunRow(
        task=task,
        kind=kind,
        language="python",
        difficulty="easy",
        driver="openai:m",
        resolved=resolved,
        pass_rate=1.0 if resolved else 0.25,
        tests=4,
        passed=4 if resolved else 1,
        steps=2,
        input_tokens=10,
        output_tokens=5,
        cost_usd=0.01,
        seconds=1.5,
        end_reason="done",
    )


def test_report_is_one_json_object_a_line_in_task_order(tmp_path: Path) -> None:
    rows = [row("b", "function", False), row("a", "program", True)]
    path = write_report(tmp_path, rows)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and lines[0].startswith('{"task": "a"')
    assert read_report(path) == sorted(rows, key=lambda r: r.task)
    text = summary_markdown(tmp_path, rows)
    assert "1 of 2 tasks resolved" in text
    assert "| function | 0 | 1 | 0% |" in text and "| program | 1 | 1 | 100% |" in text


def test_cli_lists_solve_and_run_and_refuses_two_drivers(tmp_path: Path) -> None:
    runner = CliRunner()
    assert "solve" in runner.invoke(main, ["--help"]).output
    task = write_task(tmp_path, "t", "function")
    both = [
        "solve",
        str(task),
        "--run",
        str(tmp_path / "run"),
        "--model",
        "openai:m",
        "--agent-command",
        "true",
    ]
    result = runner.invoke(main, both)
    assert result.exit_code == 1 and "one of a model" in result.output


def test_catalog_solve_rate_from_a_runs_grades(tmp_path: Path) -> None:
    """`taskfoundry tasks OUT --run RUN`: resolved of graded tasks by kind (a task with no
    grade in the run is not counted)."""
    import json

    from taskfoundry.catalog import Catalog

    tasks = tmp_path / "out" / "tasks"
    for task_id, kind in (("a", "function"), ("b", "function"), ("c", "program"), ("d", "program")):
        task_dir = write_task(tasks, task_id, kind)
        (task_dir / "tests.json").write_text(json.dumps({"branches": {"k": {"tests": ["t1"]}}}))
    run = tmp_path / "run"
    for task_id, status in (("a", "passed"), ("b", "failure"), ("c", "passed")):
        result = {"task_id": task_id, "test_results": [{"branch": "k", "name": "t1", "status": status}]}
        (run / task_id).mkdir(parents=True)
        (run / task_id / f"{task_id}.eval.json").write_text(json.dumps(result))
    rates = Catalog.load(tmp_path / "out").solve_rates(run, "kind")
    assert {k: (r.resolved, r.tasks) for k, r in rates.items()} == {"function": (1, 2), "program": (1, 1)}
    shown = CliRunner().invoke(main, ["tasks", str(tmp_path / "out"), "--run", str(run)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines() == ["function\t1/2\t50.0%", "program\t1/1\t100.0%"]
