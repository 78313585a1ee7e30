"""`run` on feature tasks (examples/featlib, built once per session, levels 1 and 2): a
scripted model through the real OpenAI SDK puts the feature back and resolves each task, with
grades equal to what `taskfoundry eval` gives; and the removed code is nowhere in the worker's
container (it is in the `:task` image: the defence switched off)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import docker
import pytest
from click.testing import CliRunner
from harness_support import graded_scores, inspect_mock_run

from taskfoundry.agent.fake_server import FakeLLMServer
from taskfoundry.cli import main
from taskfoundry.kinds.feature.taskfile import FeatureTaskYaml
from taskfoundry.models import load_yaml_model
from taskfoundry.solve.batch import read_report
from taskfoundry.solve.config import Isolation
from taskfoundry.solve.container import WorkerBox
from taskfoundry.solve.drivers import CommandDriver
from taskfoundry.solve.solve import solve_task
from taskfoundry.solve.view import load_view

from solve_support import KEY_ENV, bash, probe_config, probe_dir, probe_report, solution_files, submit

pytestmark = pytest.mark.docker


def restore_script(task_dir: Path) -> list[object]:
    """Read the task, unpack the reference's files over the workspace, run a test, submit."""
    blob = base64.b64encode((task_dir / "solution.tar.gz").read_bytes()).decode()
    return [
        bash("head -20 $TF_PROMPT; ls -la"),
        bash(f"echo {blob} | base64 -d | tar -xzf - -C /workspace && echo restored"),
        submit("restored the feature"),
    ]


def test_run_resolves_feature_tasks_as_eval_grades_them(
    featlib_tasks: list[Path], prefect_harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    levels = sorted(load_yaml_model(d / "task.yaml", FeatureTaskYaml).level for d in featlib_tasks)
    assert levels == [1, 2], levels
    monkeypatch.setenv(KEY_ENV, "sk-fake")
    script = [turn for d in featlib_tasks for turn in restore_script(d)]
    run_dir = tmp_path / "run"
    out = featlib_tasks[0].parent.parent
    with FakeLLMServer(script) as fake:  # type: ignore[arg-type]
        args = ["run", str(out), "--run", str(run_dir), "--model", "openai:fake-model"]
        args += ["--base-url", fake.openai_base_url, "--api-key-env", KEY_ENV, "--kind", "feature"]
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    rows = read_report(run_dir / "report.jsonl")
    assert [(r.task, r.kind, r.end_reason, r.steps) for r in rows] == [
        (d.name, "feature", "done", 3) for d in featlib_tasks
    ]
    assert all(r.resolved and r.tests > 0 for r in rows), rows
    graded = CliRunner().invoke(main, ["eval", str(run_dir), "--tasks", str(out / "tasks")])
    assert graded.exit_code == 0, graded.output
    summary = json.loads((run_dir / "summary.json").read_text())
    assert {s["task_id"]: (s["resolved"], s["pass_rate"]) for s in summary["tasks"]} == {
        r.task: (r.resolved, r.pass_rate) for r in rows
    }


def removed_lines(task_dir: Path, client: docker.DockerClient) -> list[str]:
    """Code lines of the reference's stripped modules that the level-1 start state lacks."""
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    stripped = json.loads((task_dir / "reports" / "feature.json").read_text())["stripped_files"]
    reference = solution_files(task_dir)
    view = load_view(task_dir)
    with WorkerBox(view, Isolation(), client) as box:
        start = "".join(box.get_file(f"{view.workspace}/{rel}").decode() for rel in stripped)
    assert task.level == 1
    lines = {
        ln.strip()
        for rel in stripped
        for ln in reference[rel].decode().splitlines()
        if len(ln.strip()) >= 25 and ln.strip() not in start and not ln.strip().startswith(("#", "def ", '"'))
    }
    assert lines, "no removed code to look for"
    return sorted(lines)


@pytest.mark.parametrize("defence", [True, False], ids=["cleanroom", "defence-off-reference-image"])
def test_removed_code_is_nowhere_in_the_container(
    featlib_tasks: list[Path], docker_client: docker.DockerClient, tmp_path: Path, defence: bool
) -> None:
    (task_dir,) = [d for d in featlib_tasks if load_yaml_model(d / "task.yaml", FeatureTaskYaml).level == 1]
    needles = removed_lines(task_dir, docker_client)
    config = probe_config(probe_dir(tmp_path, {"needles": needles}))
    assert config.agent_command is not None
    image = None if defence else load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml).images.task
    driver = CommandDriver(config.agent_command, config)
    record = solve_task(task_dir, tmp_path / "run", config, driver, docker_client, image)
    assert record.end_reason == "done", record
    report = probe_report(tmp_path / "run", task_dir.name)
    assert report["uid"] == 1000 and report["scanned"] > 0
    found = [n for n in needles if n in report["hits"]]
    assert found == [] if defence else found == needles, found


def test_inspect_with_its_mock_model_resolves_both_feature_levels(
    featlib_tasks: list[Path], tmp_path: Path
) -> None:
    """inspect_ai's `taskfoundry/tasks` on the feature kind: the mock model unpacks the reference
    over the worker's workspace, level 1 and level 2; the scorer's grade is eval's, every test."""
    steps = []
    for task_dir in featlib_tasks:  # task-id order, as the task lists them
        blob = base64.b64encode((task_dir / "solution.tar.gz").read_bytes()).decode()
        steps.append([f"echo {blob} | base64 -d | tar -xzf - -C /workspace && echo restored"])
    out = featlib_tasks[0].parent.parent
    scores = graded_scores(inspect_mock_run(out, steps, tmp_path / "logs", kind="feature"))
    assert sorted(scores) == sorted(d.name for d in featlib_tasks)
    for task_id, score in scores.items():
        assert score.value == 1.0 and score.metadata["resolved"], (task_id, score)
