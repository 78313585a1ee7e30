"""Message conversion per provider, argument parsing, config, prices and prompts."""

from __future__ import annotations

import pytest

from taskfoundry.agent import Message, ModelConfig, Price, ToolCall, make_model
from taskfoundry.agent.anthropic_backend import to_anthropic_messages
from taskfoundry.agent.config import cost_usd, resolve_api_key
from taskfoundry.agent.model import parse_arguments
from taskfoundry.agent.openai_backend import OpenAIModel, to_openai_messages
from taskfoundry.agent.prompts import load_template, render
from taskfoundry.agent.tools import CoverageFeedback, truncate
from taskfoundry.errors import ConfigError


def config(**extra: object) -> ModelConfig:
    data: dict[str, object] = {"provider": "openai", "model": "m", **extra}
    return ModelConfig.model_validate(data)


def conversation() -> list[Message]:
    ok = ToolCall(id="t1", name="bash", arguments={"command": "ls"})
    bad = parse_arguments("t2", "bash", "{oops")
    return [
        Message(role="system", content="sys"),
        Message(role="user", content="task"),
        Message(role="assistant", content="", tool_calls=[ok, bad]),
        Message(role="tool", content="a b", tool_call_id="t1"),
        Message(role="tool", content="error: bad", tool_call_id="t2", is_error=True),
        Message(role="user", content="lint says: fix it"),
        Message(role="assistant", content=""),
    ]


def test_agent_parse_arguments_variants() -> None:
    assert parse_arguments("1", "bash", '{"command": "ls"}').arguments == {"command": "ls"}
    assert parse_arguments("1", "submit", "").arguments == {}
    assert parse_arguments("1", "bash", {"command": "ls"}).arguments == {"command": "ls"}
    bad = parse_arguments("1", "bash", '{"command": "ls')
    assert bad.malformed and bad.raw_arguments == '{"command": "ls'
    listed = parse_arguments("1", "bash", "[1, 2]")
    assert listed.error == "arguments must be a JSON object"


def test_agent_anthropic_merges_tool_results_and_feedback() -> None:
    system, messages = to_anthropic_messages(conversation())
    assert system == "sys"
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert messages[2]["content"][1]["is_error"] is True
    assert messages[1]["content"][1]["input"] == {}  # malformed call replayed as an empty object
    assert messages[3]["content"] == [{"type": "text", "text": "(empty)"}]


def test_agent_openai_keeps_raw_arguments_and_tool_roles() -> None:
    messages = to_openai_messages(conversation())
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    calls = messages[2]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == ['{"command": "ls"}', "{oops"]
    assert messages[2]["content"] is None
    assert messages[4] == {"role": "tool", "tool_call_id": "t2", "content": "error: bad"}


def test_agent_cost_from_price_table() -> None:
    price = Price(input_per_mtok=3.0, output_per_mtok=15.0)
    assert cost_usd(price, 1_000_000, 0) == 3.0
    assert cost_usd(price, 2000, 1000) == pytest.approx(0.021)


def test_agent_missing_price_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no price for model 'm'"):
        OpenAIModel(config(prices={"other": Price(input_per_mtok=1, output_per_mtok=1)}), api_key="k")


def test_agent_api_key_from_the_named_variable() -> None:
    assert resolve_api_key(config(), {"OPENAI_API_KEY": "a"}) == "a"
    anthropic = ModelConfig(provider="anthropic", model="m")
    assert resolve_api_key(anthropic, {"ANTHROPIC_API_KEY": "b"}) == "b"
    assert resolve_api_key(config(api_key_env="MY_KEY"), {"MY_KEY": "c"}) == "c"
    with pytest.raises(ConfigError, match=r"\$MY_KEY"):
        resolve_api_key(config(api_key_env="MY_KEY"), {"OPENAI_API_KEY": "a"})


def test_agent_make_model_builds_the_backend_lazily() -> None:
    priced = config(prices={"m": Price(input_per_mtok=1, output_per_mtok=2)})
    model = make_model(priced, {"OPENAI_API_KEY": "k"})
    assert isinstance(model, OpenAIModel) and model.name == "m"


def test_agent_config_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert "from-env" not in config().model_dump_json()


def test_agent_prompt_unknown_variable_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="nobody"):
        render("hello $nobody", {"executable": "x"})
    assert render("costs $$5 for $who", {"who": "you"}) == "costs $5 for you\n"
    with pytest.raises(ConfigError, match="no prompt template 'none.md'"):
        load_template("taskfoundry.kinds.program.testgen", "none.md")


def test_agent_truncate_keeps_head_and_tail() -> None:
    assert truncate("short", 100) == "short"
    cut = truncate("a" * 600 + "b" * 600, 300)
    assert cut.startswith("a" * 200) and cut.endswith("b" * 100)
    assert "[... 900 characters cut ...]" in cut


def test_agent_coverage_feedback_from_missed_lines() -> None:
    feedback = CoverageFeedback.from_missed(61.5, {"b.c": [9], "a.c": [5, 3, 4, 7, 4]})
    assert feedback.uncovered == ["a.c:3-5", "a.c:7", "b.c:9"]
    assert feedback.percent == 61.5
