"""THE KEY TEST: the real OpenAI and Anthropic SDK clients, talking to a loopback fake server that
replays scripted turns (tool calls, a malformed call, a 429 and a 500), drive the agent generator
through the whole pipeline (`taskfoundry build examples/csvq`) to a written, linted, filtered branch.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from taskfoundry.agent import read_trajectory
from taskfoundry.agent.fake_formats import FakeError, FakeToolCall, FakeTurn
from taskfoundry.agent.fake_server import FakeLLMServer
from taskfoundry.cli import main
from taskfoundry.models import TestsJson, branch_key

from conftest import EXAMPLES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

GOLD = "/task/gold/executable"
CLI_TESTS = '''from tfrun import run

DATA = "name,age\\nann,30\\nbob,25\\n"


def test_version(tmp_path):
    """CATCHES: a rebuild that prints another version string."""
    result = run(["--version"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "csvq 1.2.0\\n"
    assert result.stderr == ""


def test_count_rows(tmp_path):
    """CATCHES: a count that includes the header row."""
    result = run(["count", "data.csv"], files={"data.csv": DATA}, cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "2\\n"
    assert result.stderr == ""


def test_weak(tmp_path):
    """CATCHES: little; it checks the exit status alone."""
    result = run(["--help"], cwd=tmp_path)
    assert result.returncode == 0


def test_wrong(tmp_path):
    """CATCHES: a count off by one, but expects the wrong number."""
    result = run(["count", "data.csv"], files={"data.csv": DATA}, cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "3\\n"
'''
HARVESTED_TESTS = '''from tfrun import run


def test_err_command(tmp_path):
    """CATCHES: a rebuild that accepts unknown commands (ported from tests/run.sh err_command)."""
    result = run(["frobnicate"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "csvq: unknown command 'frobnicate'\\nTry 'csvq --help' for more information.\\n"


def test_count_stdin(tmp_path):
    """CATCHES: a count that ignores standard input (ported from tests/run.sh count_empty)."""
    result = run(["count"], stdin="a,b\\n1,2\\n3,4\\n5,6\\n", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "3\\n"
    assert result.stderr == ""
'''
MUTANT_TESTS = '''from tfrun import run


def test_count_header_only(tmp_path):
    """CATCHES: a count that takes the header for a row."""
    result = run(["count"], stdin="a,b\\n", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "0\\n"
    assert result.stderr == ""


def test_count_last_row_without_newline(tmp_path):
    """CATCHES: a count that misses a last row with no newline."""
    result = run(["count"], stdin="a\\n1\\n2", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "2\\n"
    assert result.stderr == ""


def test_count_two_files(tmp_path):
    """CATCHES: a count of the first file only."""
    rows = "a\\n1\\n2\\n3\\n4\\n5\\n"
    result = run(["count", "f.csv", "f.csv"], files={"f.csv": rows}, cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "10\\n"
    assert result.stderr == ""


def test_count_quoted_newline(tmp_path):
    """CATCHES: a count of lines rather than records."""
    result = run(["count"], stdin='a\\n"x\\ny"\\n2\\n', cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "2\\n"
    assert result.stderr == ""


def test_count_missing_file(tmp_path):
    """CATCHES: a count that does not report a file it cannot open."""
    result = run(["count", "missing.csv"], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == "csvq: cannot open 'missing.csv': No such file or directory\\n"
'''
COUNT_HELP = (
    "Usage: csvq [OPTIONS] count [FILE...]\\n\\nPrint the number of data rows (the header is not "
    "counted).\\n\\nOptions:\\n  -h, --help             show this help and exit\\n\\nThe global "
    "options (see 'csvq --help') may also follow the command.\\n"
)
HELP_TESTS = f'''from tfrun import run


def test_count_help(tmp_path):
    """CATCHES: a count --help that differs from the documented text."""
    result = run(["count", "--help"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "{COUNT_HELP}"
    assert result.stderr == ""


def test_weak(tmp_path):
    """CATCHES: little; it checks the exit status alone."""
    result = run(["head", "--help"], cwd=tmp_path)
    assert result.returncode == 0
'''


def tool(name: str, **arguments: Any) -> FakeTurn:
    return FakeTurn(tool_calls=[FakeToolCall(name=name, arguments=arguments)])


def write(name: str, source: str) -> FakeTurn:
    # the newline after EOF: DockerSandbox wraps commands in `( ... ) < /dev/null` on the same line
    return tool("bash", command=f"mkdir -p eval/tests && cat > eval/tests/{name} <<'EOF'\n{source}EOF\n")


def flaky_start(command: str) -> list[FakeTurn | FakeError]:
    """A 429, a first bash call, a 500, then a malformed bash call (cut-off JSON)."""
    return [
        FakeError(status=429, message="slow down", retry_after=0.01),
        tool("bash", command=command),
        FakeError(status=500, message="upstream hiccup"),
        FakeTurn(tool_calls=[FakeToolCall(name="bash", arguments='{"command": "ls')]),
    ]


def iterative_script() -> list[FakeTurn | FakeError]:
    """One round: explore, write, coverage, run, submit, get reviewed, submit again."""
    run_tests = f"TF_EXECUTABLE={GOLD} python3 -m pytest eval/tests -q"
    return [
        *flaky_start(f"{GOLD} --help"),
        write("test_cli.py", CLI_TESTS),
        tool("coverage"),
        tool("bash", command=run_tests),
        tool("submit", summary="cli"),
        tool("submit", summary="as is"),
        # the mutation stage's revision request: tests for the survivors
        write("test_mutants_count.py", MUTANT_TESTS),
        tool("submit", summary="survivors"),
    ]


def decomposed_script() -> list[FakeTurn | FakeError]:
    """Area `harvested` (accepted at once), then area `help` (reviewed once)."""
    return [
        *flaky_start("sed -n 1,30p /src/tests/run.sh"),
        write("test_harvested.py", HARVESTED_TESTS),
        tool("submit", summary="ported"),
        write("test_help.py", HELP_TESTS),
        tool("coverage"),
        tool("submit", summary="help"),
        tool("submit", summary="as is"),
    ]


def build(
    provider: str,
    agent: dict[str, Any],
    script: list[FakeTurn | FakeError],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mutation: dict[str, Any] | None = None,
) -> tuple[Path, FakeLLMServer]:
    monkeypatch.setenv("TF_FAKE_KEY", "sk-fake")
    with FakeLLMServer(script) as fake:
        base_url = fake.openai_base_url if provider == "openai" else fake.anthropic_base_url
        price = {"input_per_mtok": 3, "output_per_mtok": 15}
        model = {
            "provider": provider,
            "model": "fake-model",
            "base_url": base_url,
            "api_key_env": "TF_FAKE_KEY",
            "max_retries": 2,
            "timeout": 60,
            "prices": {"fake-model": price},
        }
        config = {
            "generator": "agent",
            "filter": {"gold_runs": 1, "dummies": ["silent", "cat", "usage"]},
            "agent": {"model": model, "budget": {"max_revisions": 1}, **agent},
            "mutation": mutation or {"budget": 0},
        }
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        out = tmp_path / "out"
        result = CliRunner().invoke(
            main,
            ["build", str(EXAMPLES / "csvq"), "--out", str(out), "--config", str(tmp_path / "config.yaml")],
        )
    assert result.exit_code == 0, result.output + repr(result.exception)
    (task_dir,) = (out / "tasks").iterdir()
    return task_dir, fake


def branch_of(task_dir: Path, name: str) -> tuple[list[str], dict[str, list[str]]]:
    """Kept tests, and the drop reasons of the ignored ones."""
    branch = TestsJson.model_validate_json((task_dir / "tests.json").read_text()).branches[branch_key(name)]
    raw = json.loads((task_dir / "tests.json").read_text())["branches"][branch_key(name)]
    ignored = {t["name"]: sorted({r["id"] for r in t["reasons"]}) for t in raw["ignored_tests"]}
    return branch.tests, ignored


def assert_pipeline_reports(task_dir: Path, fake: FakeLLMServer) -> None:
    for report in ("lint.json", "filter.json", "coverage.json"):
        assert (task_dir / "reports" / report).exists(), report
    assert yaml.safe_load((task_dir / "task.yaml").read_text())["stats"]["line_rate"] > 0
    statuses = [r.status for r in fake.requests]
    assert statuses[:4] == [429, 200, 500, 200] and set(statuses[4:]) == {200}
    assert fake.remaining == 0


def sent_texts(fake: FakeLLMServer) -> str:
    return json.dumps([r.body for r in fake.requests])


def test_agentgen_openai_sdk_iterative_through_the_pipeline(
    prefect_harness: None, base_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = {"strategy": "iterative", "max_rounds": 1, "harvest": False}
    mutation = {"budget": 4, "program_timeout": 10}
    task_dir, fake = build("openai", agent, iterative_script(), tmp_path, monkeypatch, mutation)
    kept, ignored = branch_of(task_dir, "agent-iterative-fake-model")
    assert kept[:1] == ["eval.tests.test_cli.test_count_rows"]
    assert_survivors_revised(task_dir, fake, kept[1:])
    assert ignored == {
        # the gold's --version output for every call passes it (the `version` dummy: issue 55)
        "eval.tests.test_cli.test_version": ["dummy_pass"],
        "eval.tests.test_cli.test_weak": ["dummy_pass", "lint_high"],
        "eval.tests.test_cli.test_wrong": ["gold_fail"],
        "eval.tests.test_mutants_count.test_count_header_only": ["dummy_pass"],  # replayed: below
    }
    dropped = json.loads((task_dir / "reports" / "filter.json").read_text())["dropped"]
    assert [r["detail"] for r in dropped["eval.tests.test_cli.test_version"]] == ["replay", "version"]
    assert_pipeline_reports(task_dir, fake)
    assert all(r.path == "/v1/chat/completions" for r in fake.requests)
    sent = sent_texts(fake)
    assert "error: could not parse the arguments of bash" in sent and "line coverage:" in sent
    assert "eval.tests.test_cli.test_wrong fails on the reference program" in sent
    work = tmp_path / "out" / "work" / "generate" / task_dir.name
    traj = read_trajectory(work / "trajectories" / "agent-iterative-fake-model" / "round-1.json")
    assert traj.result is not None and (traj.result.status, traj.result.revisions) == ("submitted", 1)
    traj = read_trajectory(work / "trajectories" / "agent-iterative-fake-model" / "mutants.json")
    assert traj.result is not None and traj.result.status == "submitted"


def assert_survivors_revised(task_dir: Path, fake: FakeLLMServer, added: list[str]) -> None:
    """The survivors went back to the agent by name; its tests were linted, filtered, kept."""
    report = json.loads((task_dir / "reports" / "mutation.json").read_text())
    guided = report["guided"]
    assert guided["generator"] == "agent" and guided["error"] is None, guided
    written = [f"eval.tests.test_mutants_count.{n}" for n in re.findall(r"def (test_\w+)", MUTANT_TESTS)]
    # `count` of a header alone says 0, as most calls of `count` a worker can draw do: the replay
    # dummy's argv fallback passes it (issue 55)
    dropped = json.loads((task_dir / "reports" / "filter.json").read_text())["dropped"]
    replayed = [n for n in written if any(r["detail"] == "replay" for r in dropped.get(n, []))]
    assert replayed == ["eval.tests.test_mutants_count.test_count_header_only"]
    assert added == [n for n in written if n not in replayed]
    assert guided["tests_added"] == len(added) and report["score"] >= guided["score_before"]
    texts = [m["content"] for r in fake.requests for m in r.body["messages"] if m["role"] == "user"]
    (request,) = {t for t in texts if "survive your suite" in t}
    before = [r for r in report["records"] if r["status"] == "survived" or r["killed_by"] in added]
    assert len(before) == guided["survived_before"] > 0
    for r in before:
        change = (
            f"{r['file']}:{r['line']} ({r['operator']}): `{r['original']}` replaced by `{r['replacement']}`"
        )
        assert change in request
    stats = yaml.safe_load((task_dir / "task.yaml").read_text())["stats"]
    assert stats["mutation_score"] == report["score"]


def test_agentgen_anthropic_sdk_decomposed_with_harvest_through_the_pipeline(
    prefect_harness: None, base_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = {"strategy": "decomposed", "areas": ["help"], "harvest": True}
    task_dir, fake = build("anthropic", agent, decomposed_script(), tmp_path, monkeypatch)
    kept, ignored = branch_of(task_dir, "agent-decomposed-fake-model")
    harvested = ["eval.tests.test_harvested.test_err_command", "eval.tests.test_harvested.test_count_stdin"]
    assert kept == [*harvested, "eval.tests.test_help.test_count_help"]
    assert ignored == {"eval.tests.test_help.test_weak": ["dummy_pass", "lint_high"]}
    assert_pipeline_reports(task_dir, fake)
    assert all(r.path == "/v1/messages" for r in fake.requests)
    assert "/src/tests/run.sh" in sent_texts(fake)
    report = json.loads(
        (
            tmp_path / "out" / "work" / "generate" / task_dir.name / "agent-decomposed-fake-model.json"
        ).read_text()
    )
    assert [(r["label"], r["revisions"]) for r in report["runs"]] == [("area-harvested", 0), ("area-help", 1)]
