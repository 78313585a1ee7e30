"""`solve` and `run` on function tasks (examples/pyfuncs, built once per session): the real
OpenAI and Anthropic SDKs against the loopback fake, a scripted model that really solves a task
through tool calls, budgets and their end reasons, the command driver, `run`'s report against
`taskfoundry eval`, and a killed run resumed."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest
from click.testing import CliRunner
from harness_support import graded_scores, inspect_mock_run

from taskfoundry.agent import read_trajectory
from taskfoundry.agent.fake_server import FakeLLMServer
from taskfoundry.agent.scripted import ScriptedModel
from taskfoundry.agent.scripted import bash as scripted_bash
from taskfoundry.cli import main
from taskfoundry.evaluate.run import evaluate_one
from taskfoundry.flows.artifacts import read_artifacts
from taskfoundry.grading.config import EvalConfig
from taskfoundry.solve.batch import read_report
from taskfoundry.solve.config import SolveConfig
from taskfoundry.solve.drivers import CommandDriver, ModelDriver
from taskfoundry.solve.records import RESULT_JSON, SUBMISSION
from taskfoundry.solve.solve import make_driver, solve_task

from solve_support import (
    KEY_ENV,
    bash,
    function_script,
    hidden_test_names,
    model_config,
    probe_config,
    probe_dir,
    probe_report,
    solution_files,
    submit,
    tar_names,
)

pytestmark = pytest.mark.docker

FAST_EVAL = EvalConfig(pytest_workers=1)


@pytest.fixture(scope="module")
def fn_tasks(function_tasks: tuple[Path, list[Path]]) -> tuple[Path, list[Path]]:
    out, dirs = function_tasks
    assert len(dirs) >= 2, dirs
    return out, dirs


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_scripted_model_solves_a_function_task_through_the_sdk(
    provider: str, fn_tasks: tuple[Path, list[Path]], docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    task_dir = fn_tasks[1][0]
    with FakeLLMServer(function_script(task_dir)) as fake:
        url = fake.openai_base_url if provider == "openai" else fake.anthropic_base_url
        config = SolveConfig(model=model_config(provider, url), eval=FAST_EVAL)
        record = solve_task(
            task_dir, tmp_path, config, make_driver(config, {KEY_ENV: "sk-fake"}), docker_client
        )
    assert [r.status for r in fake.requests] == [429, 200, 200, 200, 200]  # the SDK retried the 429
    assert (record.end_reason, record.steps, record.driver) == ("done", 4, f"{provider}:fake-model")
    assert record.input_tokens == 400 and record.cost_usd == pytest.approx((400 * 3 + 80 * 15) / 1e6)
    out = tmp_path / task_dir.name
    assert tar_names((out / SUBMISSION).read_bytes()) == [".", "candidate.py"]
    trajectory = read_trajectory(out / "trajectory.json")
    assert "imported" in trajectory.steps[2].observations[0].output
    first = trajectory.steps[0].observations[0].output
    assert "\n1000\n" in first and "Implement" in first  # the worker's uid; the task text at $TF_PROMPT
    assert trajectory.result is not None and trajectory.result.status == "submitted"
    score = evaluate_one(task_dir, tmp_path, FAST_EVAL, docker_client, "solve")
    assert score.resolved and score.tests > 0, score


def _scripted(config: SolveConfig, *turns: object) -> ModelDriver:
    return ModelDriver(ScriptedModel(turns), config)  # type: ignore[arg-type]


def test_budgets_end_runs_with_their_reason(
    fn_tasks: tuple[Path, list[Path]], docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    task_dir = fn_tasks[1][0]
    looping = [scripted_bash("echo work > notes.txt", cost=0.4) for _ in range(10)]
    cases = {
        "step_limit": (SolveConfig(agent_command="x", step_limit=3, cost_limit=None), looping),
        "cost_limit": (SolveConfig(agent_command="x", step_limit=None, cost_limit=1.0), looping),
        "time_limit": (SolveConfig(agent_command="x", time_limit=3), [scripted_bash("sleep 20")] * 3),
        "model_error": (SolveConfig(agent_command="x"), []),
    }
    for reason, (config, turns) in cases.items():
        record = solve_task(task_dir, tmp_path / reason, config, _scripted(config, *turns), docker_client)
        assert record.end_reason == reason, (reason, record)
        # a budget's end still leaves the work done so far to grade
        assert (tmp_path / reason / task_dir.name / SUBMISSION).is_file()
    steps = {r: json.loads((tmp_path / r / task_dir.name / "solve.json").read_text())["steps"] for r in cases}
    assert steps == {"step_limit": 3, "cost_limit": 3, "time_limit": 1, "model_error": 0}


def test_command_driver_ends_by_exit_code_and_time(
    fn_tasks: tuple[Path, list[Path]], docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    task_dir = fn_tasks[1][0]
    runs = {
        "done": ("""cp $TF_PROMPT notes.md && echo '{"steps": 7, "cost_usd": 0.25}' > $TF_STATS""", 60.0),
        "agent_error": ("echo failing >&2; exit 3", 60.0),
        "time_limit": ("sleep 30", 2.0),
    }
    for reason, (command, limit) in runs.items():
        config = SolveConfig(agent_command=command, time_limit=limit)
        record = solve_task(
            task_dir, tmp_path / reason, config, CommandDriver(command, config), docker_client
        )
        assert record.end_reason == reason, record
    trajectory = json.loads((tmp_path / "agent_error" / task_dir.name / "trajectory.json").read_text())
    assert (trajectory["exit_code"], trajectory["stderr"].strip()) == (3, "failing")
    assert "notes.md" in tar_names((tmp_path / "done" / task_dir.name / SUBMISSION).read_bytes())
    done = json.loads((tmp_path / "done" / task_dir.name / "solve.json").read_text())
    assert (done["steps"], done["cost_usd"]) == (7, 0.25)  # what the command reported at $TF_STATS


def _run_args(out: Path, run_dir: Path, url: str, limit: int) -> list[str]:
    return [
        "run",
        str(out),
        "--run",
        str(run_dir),
        "--model",
        "openai:fake-model",
        "--base-url",
        url,
        "--api-key-env",
        KEY_ENV,
        "--price",
        "3,15",
        "--kind",
        "function",
        "--limit",
        str(limit),
    ]


def test_run_reports_what_eval_grades(
    fn_tasks: tuple[Path, list[Path]],
    docker_client: docker.DockerClient,
    prefect_harness: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two tasks: the first solved, the second given up after one step. The report's grades
    are what `taskfoundry eval` gives the same submissions."""
    out, dirs = fn_tasks
    monkeypatch.setenv(KEY_ENV, "sk-fake")
    script = function_script(dirs[0], retry=False) + [bash("ls"), submit("gave up")]
    run_dir = tmp_path / "run-graded"  # the artifact's key names it: other tests' runs are `run`
    with FakeLLMServer(script) as fake:
        result = CliRunner().invoke(main, _run_args(out, run_dir, fake.openai_base_url, 2))
    assert result.exit_code == 0, result.output + repr(result.exception)
    rows = {r.task: r for r in read_report(run_dir / "report.jsonl")}
    assert list(rows) == [d.name for d in dirs[:2]]
    first, second = rows[dirs[0].name], rows[dirs[1].name]
    assert (first.resolved, first.steps, first.end_reason, first.kind) == (True, 4, "done", "function")
    assert (second.resolved, second.steps, second.pass_rate < 1) == (False, 2, True)
    assert "1 of 2 tasks resolved" in result.output
    (table,) = read_artifacts([f"agent-run-{run_dir.name}"])
    assert dirs[0].name in json.dumps(table.data)
    # `taskfoundry eval` on the same submissions, against exactly these tasks
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for d in dirs[:2]:
        (tasks / d.name).symlink_to(d)
    graded = CliRunner().invoke(main, ["eval", str(run_dir), "--tasks", str(tasks)])
    assert graded.exit_code == 0, graded.output
    summary = json.loads((run_dir / "summary.json").read_text())
    assert {s["task_id"]: (s["resolved"], s["pass_rate"], s["passed"]) for s in summary["tasks"]} == {
        r.task: (r.resolved, r.pass_rate, r.passed) for r in rows.values()
    }


def test_a_killed_run_resumes_without_rerunning_finished_tasks(
    fn_tasks: tuple[Path, list[Path]],
    docker_client: docker.DockerClient,
    prefect_harness: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, dirs = fn_tasks
    run_dir = tmp_path / "run"
    # the first task is solved; the second is still working when the process is killed
    first = function_script(dirs[0], retry=False)
    stuck = [bash("sleep 600")]
    env = {**os.environ, KEY_ENV: "sk-fake", "PYTHONPATH": os.pathsep.join(sys.path)}
    with FakeLLMServer(first + stuck) as fake:
        args = _run_args(out, run_dir, fake.openai_base_url, 2)
        proc = subprocess.Popen(
            [sys.executable, "-c", "from taskfoundry.cli import main; main()", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 400
            while fake.remaining and time.monotonic() < deadline:  # until the second task sleeps
                assert proc.poll() is None, "the run ended before it was killed"
                time.sleep(1)
            assert not fake.remaining
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # what the killed process left behind: its tasks' containers only (another worker's solve runs
    # beside it; removing every solve container failed a featlib test under xdist)
    for task_dir in dirs:
        mine = {"label": f"taskfoundry-solve={task_dir.name}"}
        for container in docker_client.containers.list(all=True, filters=mine):
            container.remove(force=True)
    done = run_dir / dirs[0].name / RESULT_JSON
    assert done.is_file() and not (run_dir / dirs[1].name / RESULT_JSON).exists()
    stamp = done.stat().st_mtime_ns
    monkeypatch.setenv(KEY_ENV, "sk-fake")
    with FakeLLMServer(function_script(dirs[1], retry=False)) as fake:
        result = CliRunner().invoke(main, _run_args(out, run_dir, fake.openai_base_url, 2))
        assert result.exit_code == 0, result.output + repr(result.exception)
        assert fake.remaining == 0 and len(fake.requests) == 4  # the second task's turns only
    assert done.stat().st_mtime_ns == stamp  # the finished task was not run again
    rows = read_report(run_dir / "report.jsonl")
    assert [(r.task, r.resolved) for r in rows] == [(dirs[0].name, True), (dirs[1].name, True)]


@pytest.mark.parametrize("defence", [True, False], ids=["cleanroom", "planted"])
def test_no_reference_or_hidden_cases_in_a_function_container(
    fn_tasks: tuple[Path, list[Path]], docker_client: docker.DockerClient, tmp_path: Path, defence: bool
) -> None:
    """The function kind's `:task` and `:task_cleanroom` are one image with no project code in
    it, so the defence to switch off is what reaches the container: off, the task directory
    is planted (as a solver that handed the agent the task folder would), and the probe finds
    the reference and the cases."""
    task_dir = fn_tasks[1][0]
    prompt = (task_dir / "prompt.md").read_text()
    code = solution_files(task_dir)["candidate.py"].decode()
    needles = [ln.strip() for ln in code.splitlines() if len(ln.strip()) >= 20 and ln.strip() not in prompt]
    names, _ = hidden_test_names(task_dir)
    assert needles and names
    spec = {"needles": needles, "names": [*names, "cases.json", "solution.tar.gz"]}
    config = probe_config(probe_dir(tmp_path, spec, task_dir))
    command = (
        ""
        if defence
        else "cp -r /agent/planted /tmp/planted && cd /tmp/planted/* && tar -xzf solution.tar.gz"
        " && for t in tests/*.tar.gz; do tar -xzf $t; done && cd /workspace && "
    ) + str(config.agent_command)
    config = config.model_copy(update={"agent_command": command})
    record = solve_task(task_dir, tmp_path / "run", config, CommandDriver(command, config), docker_client)
    assert record.end_reason == "done", record
    report = probe_report(tmp_path / "run", task_dir.name)
    assert report["uid"] == 1000 and report["interfaces"] == ["lo"]
    if defence:
        assert (report["hits"], report["named"]) == ({}, [])
    else:
        assert set(report["hits"]) == set(needles) and report["named"]


def test_run_an_external_agent_two_tasks_at_once(
    fn_tasks: tuple[Path, list[Path]], prefect_harness: None, tmp_path: Path
) -> None:
    """`run --agent-command` with `--concurrency 2`: the command finds its own files at /agent
    (here, each task's answer by task id) and the task at $TF_TASK_ID."""
    out, dirs = fn_tasks
    agent = tmp_path / "agent"
    agent.mkdir()
    for d in dirs[:3]:
        (agent / f"{d.name}.py").write_bytes(solution_files(d)["candidate.py"])
    run_dir = tmp_path / "run"
    args = [
        "run",
        str(out),
        "--run",
        str(run_dir),
        "--kind",
        "function",
        "--limit",
        "3",
        "--concurrency",
        "2",
    ]
    args += ["--agent-command", 'cp "/agent/$TF_TASK_ID.py" candidate.py', "--agent-dir", str(agent)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    rows = read_report(run_dir / "report.jsonl")
    assert [(r.task, r.driver, r.end_reason, r.resolved) for r in rows] == [
        (d.name, "command", "done", True) for d in dirs[:3]
    ]


FLOOD_STATS = """{ printf '{"steps": 5, "note": "'; head -c 1000000 /dev/zero | tr '\\0' a; echo '"}'; }"""


@pytest.mark.parametrize("defence", [True, False])
@pytest.mark.parametrize("flood", ["workspace", "stats"])
def test_a_flooding_agent_is_not_copied_into_the_host(
    fn_tasks: tuple[Path, list[Path]],
    docker_client: docker.DockerClient,
    tmp_path: Path,
    flood: str,
    defence: bool,
) -> None:
    """An agent fills its workspace (3 MiB of noise: no compression helps) or $TF_STATS (a
    megabyte): with the caps, the first ends the run in sandbox_error unread and the second
    counts as zero; switched off (caps above the flood), each is copied into this process."""
    task_dir = fn_tasks[1][0]
    command = {
        "workspace": "head -c 3145728 /dev/urandom > noise.bin",
        "stats": f"{FLOOD_STATS} > $TF_STATS",
    }[flood]
    config = SolveConfig(agent_command=command, time_limit=60.0)
    config.isolation.submission_mb = 1 if defence else 8
    config.isolation.stats_bytes = 10_000 if defence else 2_000_000
    record = solve_task(task_dir, tmp_path / "run", config, CommandDriver(command, config), docker_client)
    submission = tmp_path / "run" / task_dir.name / SUBMISSION
    if flood == "stats":
        assert (record.end_reason, record.steps) == ("done", 0 if defence else 5), record
    elif defence:
        assert record.end_reason == "sandbox_error" and "over the cap" in (record.error or ""), record
        assert not submission.exists()
    else:
        assert record.end_reason == "done" and "noise.bin" in tar_names(submission.read_bytes()), record


def test_inspect_with_its_mock_model_resolves_function_tasks(
    fn_tasks: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    """inspect_ai's `taskfoundry/tasks` on the function kind: the mock model's bash call writes the
    reference's candidate.py in the worker's container; the scorer's grade is eval's, every test."""
    out, dirs = fn_tasks
    chosen = dirs[:2]
    steps = []
    for task_dir in chosen:
        code = base64.b64encode(solution_files(task_dir)["candidate.py"]).decode()
        steps.append([f'echo {code} | base64 -d > "$TF_WORKSPACE/candidate.py" && id -u'])
    log = inspect_mock_run(out, steps, tmp_path / "logs", kind="function", limit=len(chosen))
    scores = graded_scores(log)
    assert sorted(scores) == [d.name for d in chosen]
    for task_id, score in scores.items():
        passed, total = score.answer.split("/")
        assert score.value == 1.0 and passed == total and int(total) > 0, (task_id, score)
        assert score.metadata["resolved"] and score.metadata["error_code"] is None
