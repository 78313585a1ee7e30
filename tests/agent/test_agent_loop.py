"""The agent loop driven by the scripted model against a real LocalSandbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskfoundry.agent import (
    AgentConfig,
    AgentResult,
    AgentTask,
    CoverageFeedback,
    Message,
    Round,
    ScriptedModel,
    ToolSpec,
    Turn,
    read_trajectory,
    run_agent,
)
from taskfoundry.agent.model import ToolCall
from taskfoundry.agent.schema import TRAJECTORY_SCHEMA_VERSION
from taskfoundry.agent.scripted import bash, call, fail, malformed, say, submit
from taskfoundry.errors import TaskfoundryError
from taskfoundry.sandbox.local import LocalSandbox

from conftest import make_test_task

TEST_FILE = """\
import subprocess


def test_echo():
    \"\"\"CATCHES: an echo that drops its argument.\"\"\"
    out = subprocess.run(["echo", "hi"], capture_output=True, text=True).stdout
    assert out == "hi\\n"
"""


def write_test(name: str = "test_echo.py", *, cost: float = 0.0) -> Turn:
    return bash(f"mkdir -p tests && cat > tests/{name} <<'EOF'\n{TEST_FILE}EOF\n", cost=cost)


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[LocalSandbox]:
    with LocalSandbox(tmp_path / "root") as box:
        box.host_path("/work").mkdir(parents=True)
        yield box


def task() -> AgentTask:
    return make_test_task()


def run(model: ScriptedModel, sandbox: LocalSandbox, tmp_path: Path, **config: object) -> AgentResult:
    cfg = AgentConfig.model_validate(config)
    return run_agent(model, sandbox, task(), cfg, trajectory_path=tmp_path / "traj.json")


def tool_messages(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role == "tool"]


def test_agent_submitted_run_writes_a_test_file(sandbox: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([write_test(), bash("ls tests"), submit("echo covered")])
    result = run(model, sandbox, tmp_path)
    assert result.status == "submitted"
    assert result.exhausted is None and result.error is None
    assert result.output_dir == "/work/tests"
    assert result.files == ["test_echo.py"]
    assert result.steps == 3
    assert sandbox.get_file("/work/tests/test_echo.py").decode() == TEST_FILE
    ls_result = tool_messages(model.seen[2])[-1]
    assert ls_result.content == "exit code: 0\ntest_echo.py\n"
    assert [m.role for m in model.seen[0]] == ["system", "user"]
    assert "/work/prog" in model.seen[0][1].content
    assert [t.name for t in model.tools[0]] == ["bash", "submit"]


def test_agent_step_budget_ends_cleanly_and_keeps_tests(sandbox: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([write_test(), bash("true"), submit()])
    result = run(model, sandbox, tmp_path, step_limit=2)
    assert (result.status, result.exhausted) == ("exhausted", "steps")
    assert result.files == ["test_echo.py"]
    assert result.steps == 2 and model.remaining == 1
    saved = read_trajectory(tmp_path / "traj.json")
    assert saved.result is not None and saved.result.exhausted == "steps"


def test_agent_cost_budget_ends_cleanly_after_running_the_last_turn(
    sandbox: LocalSandbox, tmp_path: Path
) -> None:
    script = [bash("true", cost=0.4), bash("true", cost=0.4), write_test(cost=0.4), submit()]
    model = ScriptedModel(script)
    result = run(model, sandbox, tmp_path, cost_limit=1.0)
    assert (result.status, result.exhausted) == ("exhausted", "cost")
    assert result.steps == 3
    assert result.usage.cost_usd == pytest.approx(1.2)
    assert result.files == ["test_echo.py"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class SlowModel(ScriptedModel):
    """Each answer takes 30 fake seconds."""

    def __init__(self, script: list[Turn], clock: FakeClock) -> None:
        super().__init__(script)
        self.clock = clock

    def complete(self, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        self.clock.now += 30
        return super().complete(messages, tools)


def test_agent_time_budget_ends_cleanly(sandbox: LocalSandbox, tmp_path: Path) -> None:
    clock = FakeClock()
    model = SlowModel([write_test(), bash("true"), submit()], clock)
    result = run_agent(
        model,
        sandbox,
        task(),
        AgentConfig(time_limit=60),
        trajectory_path=tmp_path / "traj.json",
        clock=clock,
    )
    assert (result.status, result.exhausted) == ("exhausted", "time")
    assert result.steps == 2 and result.elapsed_s == 60
    assert result.files == ["test_echo.py"]


def test_agent_time_budget_cuts_a_long_command(sandbox: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([write_test(), bash("sleep 30"), submit()])
    result = run(model, sandbox, tmp_path, time_limit=1.5)
    assert (result.status, result.exhausted) == ("exhausted", "time")
    assert result.elapsed_s < 10
    sleep_obs = read_trajectory(tmp_path / "traj.json").steps[1].observations[0]
    assert "timed out" in sleep_obs.output
    assert result.files == ["test_echo.py"]


def test_agent_malformed_tool_call_goes_back_as_an_error(sandbox: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([malformed("bash", '{"command": "ls'), write_test(), submit()])
    result = run(model, sandbox, tmp_path)
    assert result.status == "submitted"
    assert result.files == ["test_echo.py"]
    error = tool_messages(model.seen[1])[-1]
    assert error.is_error
    assert error.content.startswith("error: could not parse the arguments of bash: invalid JSON")


def test_agent_bad_arguments_and_unknown_tools_are_errors(sandbox: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([call("bash", cmd="ls"), call("coverage"), submit()])
    result = run(model, sandbox, tmp_path)
    assert result.status == "submitted"
    errors = [m.content for m in tool_messages(model.seen[2])]
    assert errors == [
        "error: bash needs a non-empty string argument `command`",
        "error: unknown tool 'coverage'; tools: bash, submit",
    ]


def test_agent_reply_without_tool_call_is_nudged(sandbox: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([say("let me think"), submit()])
    result = run(model, sandbox, tmp_path)
    assert result.status == "submitted" and result.files == []
    assert model.seen[1][-1].role == "user"
    assert "called no tool" in model.seen[1][-1].content


def test_agent_calls_after_submit_in_one_turn_are_not_run(sandbox: LocalSandbox, tmp_path: Path) -> None:
    calls = [
        ToolCall(id="a", name="submit", arguments={}),
        ToolCall(id="b", name="bash", arguments={"command": "touch late"}),
    ]
    result = run(ScriptedModel([Turn(tool_calls=calls)]), sandbox, tmp_path)
    assert result.status == "submitted"
    assert not sandbox.host_path("/work/late").exists()
    observations = read_trajectory(tmp_path / "traj.json").steps[0].observations
    assert [o.is_error for o in observations] == [False, True]


def test_agent_model_error_ends_run_with_error_record(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = run(ScriptedModel([write_test(), fail("HTTP 500 after 4 retries")]), sandbox, tmp_path)
    assert result.status == "error"
    assert result.error == "model: HTTP 500 after 4 retries"
    assert result.files == ["test_echo.py"]
    saved = read_trajectory(tmp_path / "traj.json")
    assert saved.result is not None and saved.result.status == "error"


def test_agent_other_exceptions_propagate(sandbox: LocalSandbox, tmp_path: Path) -> None:
    with pytest.raises(ZeroDivisionError):
        run(ScriptedModel([ZeroDivisionError()]), sandbox, tmp_path)


class TrajectoryChecker(ScriptedModel):
    """Reads the trajectory file before each answer: it must be complete, valid JSON."""

    def __init__(self, script: list[Turn], path: Path) -> None:
        super().__init__(script)
        self.path = path
        self.step_counts: list[int] = []

    def complete(self, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        data = json.loads(self.path.read_text())
        assert data["schema_version"] == TRAJECTORY_SCHEMA_VERSION
        assert data["result"] is None
        assert len(data["messages"]) == len(messages)
        self.step_counts.append(len(data["steps"]))
        return super().complete(messages, tools)


def test_agent_trajectory_is_valid_json_after_each_step(sandbox: LocalSandbox, tmp_path: Path) -> None:
    path = tmp_path / "runs" / "traj.json"
    model = TrajectoryChecker([write_test(), bash("ls"), submit()], path)
    result = run_agent(model, sandbox, task(), AgentConfig(), trajectory_path=path)
    assert model.step_counts == [0, 1, 2]
    saved = read_trajectory(path)
    assert saved.result == result
    assert [s.index for s in saved.steps] == [1, 2, 3]
    assert list(path.parent.iterdir()) == [path]  # no temp files left


def test_agent_feedback_requests_a_revision(sandbox: LocalSandbox, tmp_path: Path) -> None:
    rounds: list[Round] = []

    def feedback(round_: Round) -> list[str]:
        rounds.append(round_)
        return ["lint: test_echo.py has a weak assertion"] if len(rounds) == 1 else []

    model = ScriptedModel([write_test(), submit("v1"), write_test("test_more.py"), submit("v2")])
    result = run_agent(model, sandbox, task(), trajectory_path=tmp_path / "t.json", feedback=feedback)
    assert result.status == "submitted" and result.revisions == 1
    assert result.files == ["test_echo.py", "test_more.py"]
    assert [r.summary for r in rounds] == ["v1", "v2"]
    assert rounds[0].files == ["test_echo.py"]
    after_submit = model.seen[2][-2:]
    assert [m.role for m in after_submit] == ["tool", "user"]
    assert after_submit[1].content == "lint: test_echo.py has a weak assertion"
    saved = read_trajectory(tmp_path / "t.json")
    assert saved.steps[1].feedback == ["lint: test_echo.py has a weak assertion"]


def test_agent_feedback_stops_at_max_revisions(sandbox: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([submit(), submit(), submit()])
    result = run_agent(
        model,
        sandbox,
        task(),
        AgentConfig(max_revisions=1),
        trajectory_path=tmp_path / "t.json",
        feedback=lambda round_: ["again"],
    )
    assert result.status == "submitted" and result.revisions == 1 and result.steps == 2


def test_agent_coverage_report_is_forwarded(sandbox: LocalSandbox, tmp_path: Path) -> None:
    def coverage() -> CoverageFeedback:
        return CoverageFeedback(percent=42.0, uncovered=["src/main.c:3-4", "src/io.c:10"])

    model = ScriptedModel([call("coverage"), submit()])
    result = run_agent(model, sandbox, task(), trajectory_path=tmp_path / "t.json", coverage=coverage)
    assert result.status == "submitted"
    assert [t.name for t in model.tools[0]] == ["bash", "coverage", "submit"]
    assert tool_messages(model.seen[1])[-1].content == (
        "line coverage: 42.0%\nuncovered lines:\nsrc/main.c:3-4\nsrc/io.c:10"
    )


def test_agent_coverage_failure_is_told_to_the_model(sandbox: LocalSandbox, tmp_path: Path) -> None:
    def coverage() -> CoverageFeedback:
        raise TaskfoundryError("gcovr found no data")

    model = ScriptedModel([call("coverage"), submit()])
    run_agent(model, sandbox, task(), trajectory_path=tmp_path / "t.json", coverage=coverage)
    message = tool_messages(model.seen[1])[-1]
    assert message.is_error and "gcovr found no data" in message.content


def test_agent_long_output_is_truncated_for_the_model(sandbox: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([bash("seq 1 100000"), submit()])
    run(model, sandbox, tmp_path, output_limit=1000)
    content = tool_messages(model.seen[1])[-1].content
    assert len(content) < 1100
    assert content.startswith("exit code: 0\n1\n2\n") and content.endswith("99999\n100000\n")
    assert "characters cut" in content


def test_agent_prompts_come_from_the_task(sandbox: LocalSandbox, tmp_path: Path) -> None:
    """The loop asks for nothing itself: the caller's templates, filled with its variables."""
    build = AgentTask(
        workdir="/work",
        output_dir="/work",
        outputs=["build.sh"],
        system="You make $name build. Tools:\n$tools",
        prompt="Write $output_dir/build.sh, starting in $workdir. $instructions",
        variables={"name": "a repository"},
        instructions="Use sh.",
    )
    model = ScriptedModel([bash("echo make > build.sh && touch notes.txt"), submit()])
    result = run_agent(model, sandbox, build, trajectory_path=tmp_path / "t.json")
    assert model.seen[0][0].content.startswith("You make a repository build. Tools:\n- `bash`")
    assert model.seen[0][1].content == "Write /work/build.sh, starting in /work. Use sh.\n"
    assert result.files == ["build.sh"]  # only what the task's outputs name


def test_agent_unknown_template_variable_is_a_config_error(sandbox: LocalSandbox, tmp_path: Path) -> None:
    bad = make_test_task().model_copy(update={"prompt": "Test $nothing"})
    with pytest.raises(TaskfoundryError, match="task template: bad or unknown variable 'nothing'"):
        run_agent(ScriptedModel([submit()]), sandbox, bad, trajectory_path=tmp_path / "t.json")


def test_agent_sandbox_failure_ends_run_with_error_record(sandbox: LocalSandbox, tmp_path: Path) -> None:
    broken = make_test_task(workdir="/gone")
    model = ScriptedModel([bash("ls"), submit()])
    result = run_agent(model, sandbox, broken, trajectory_path=tmp_path / "t.json")
    assert result.status == "error"
    assert result.error is not None and result.error.startswith("sandbox: working directory")
    assert read_trajectory(tmp_path / "t.json").result == result
