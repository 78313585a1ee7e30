"""The agent generator's pure parts: names, harvesting, budgets, coverage feedback, lint notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfoundry.agent import AgentConfig, AgentResult, Usage
from taskfoundry.config import Config
from taskfoundry.kinds.program.settings import AgentGenConfig
from taskfoundry.kinds.program.testgen.agent_gen import (
    AgentGenerator,
    _Budget,
    branch_name,
    find_behavioral_tests,
)
from taskfoundry.kinds.program.testgen.agent_support import coverage_feedback, lint_notes
from taskfoundry.kinds.program.testgen.base import make_generator
from taskfoundry.naming import junit_file, junit_id, junit_name


def test_agentgen_registry_builds_the_agent_generator() -> None:
    assert isinstance(make_generator("agent"), AgentGenerator)


def test_agentgen_config_section_from_yaml_shape() -> None:
    config = Config.model_validate(
        {
            "generator": "agent",
            "agent": {
                "strategy": "decomposed",
                "areas": ["help"],
                "budget": {"step_limit": 10},
                "model": {
                    "provider": "openai",
                    "model": "m",
                    "base_url": "http://127.0.0.1:1/v1",
                    "prices": {"m": {"input_per_mtok": 1, "output_per_mtok": 2}},
                },
            },
        }
    )
    assert config.agent.model.base_url == "http://127.0.0.1:1/v1"
    assert config.agent.budget.step_limit == 10 and config.agent.budget.cost_limit == 10.0
    assert Config().agent.budget.step_limit == 200
    with pytest.raises(ValueError, match="strategy"):
        AgentGenConfig.model_validate({"strategy": "random"})


@pytest.mark.parametrize(
    ("nodeid", "name"),
    [
        ("eval/tests/test_a.py::test_b", "eval.tests.test_a.test_b"),
        ("eval/tests/test_a.py::TestC::test_d[x-1.5]", "eval.tests.test_a.TestC.test_d[x-1.5]"),
        ("eval/tests/cli_test.py::test_e", "eval.tests.cli_test.test_e"),
    ],
)
def test_agentgen_junit_name_matches_the_junit_report(nodeid: str, name: str) -> None:
    assert junit_id(nodeid) == name
    file, _, test = nodeid.partition("::")
    assert junit_name(file, test) == name  # the rule the writer and the lint stage use
    assert junit_file(name) == file.removeprefix("eval/tests/")


def test_agentgen_branch_name_is_a_safe_path_part() -> None:
    assert branch_name("iterative", "claude-sonnet-4-5") == "agent-iterative-claude-sonnet-4-5"
    assert branch_name("monolithic", "org/model:v1 beta") == "agent-monolithic-org-model-v1-beta"


def test_agentgen_harvest_finds_shell_tests_under_test_dirs(tmp_path: Path) -> None:
    for name in (
        "tests/run.sh",
        "tests/expected/a.out",
        "t/basic.t",
        "src/build.sh",
        "test/cases/x.bats",
        ".git/hooks/tests/x.sh",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert find_behavioral_tests(tmp_path) == ["t/basic.t", "test/cases/x.bats", "tests/run.sh"]


def test_agentgen_budget_shares_what_is_left() -> None:
    now = [0.0]
    budget = _Budget(AgentConfig(step_limit=10, cost_limit=4.0, time_limit=100.0), lambda: now[0])
    first = budget.share(2)
    assert (first.step_limit, first.cost_limit, first.time_limit) == (5, 2.0, 50.0)
    budget.add(AgentResult(status="submitted", output_dir="/t", steps=3, usage=Usage(cost_usd=1.0)))
    now[0] = 40.0
    second = budget.share(1)
    assert (second.step_limit, second.cost_limit, second.time_limit) == (7, 3.0, 60.0)
    assert budget.spent() is None
    now[0] = 100.0
    assert budget.spent() == "time"


def test_agentgen_budget_unlimited_stays_unlimited() -> None:
    budget = _Budget(AgentConfig(step_limit=None, cost_limit=None, time_limit=None), lambda: 0.0)
    share = budget.share(3)
    assert (share.step_limit, share.cost_limit, share.time_limit) == (None, None, None)


def test_agentgen_coverage_feedback_lists_missed_ranges() -> None:
    fb = coverage_feedback({"a.c": {1, 2}}, {"a.c": {1, 2, 3, 4, 9}, "b.c": {5}}, "d")
    assert fb.percent == pytest.approx(100 * 2 / 6)
    assert fb.uncovered == ["a.c:3-4", "a.c:9", "b.c:5"] and fb.detail == "d"
    assert coverage_feedback({}, {}).percent == 0.0


def test_agentgen_lint_notes_name_high_findings_and_parse_errors() -> None:
    weak = "from tfrun import run\n\n\ndef test_w(tmp_path):\n    assert run([]).returncode == 0\n"
    notes = lint_notes({"test_w.py": weak, "test_bad.py": "def test_x(:\n"})
    assert any(n.startswith("eval/tests/test_bad.py does not parse") for n in notes)
    assert any(n.startswith("eval.tests.test_w.test_w (line 5) sole_returncode") for n in notes)
