"""The REAL openai and anthropic SDK clients drive the loop through the loopback fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskfoundry.agent import AgentResult, ModelConfig, Price, make_model, run_agent
from taskfoundry.agent.config import cost_usd
from taskfoundry.agent.fake_formats import FakeError, FakeToolCall, FakeTurn
from taskfoundry.agent.fake_server import FakeLLMServer, RecordedRequest
from taskfoundry.sandbox.local import LocalSandbox

from conftest import make_test_task

TEST_FILE = 'def test_hello():\n    """CATCHES: nothing, it is a demo."""\n    assert 1 + 1 == 2\n'
WRITE = f"mkdir -p tests && cat > tests/test_hello.py <<'EOF'\n{TEST_FILE}EOF"
PRICE = Price(input_per_mtok=3.0, output_per_mtok=15.0)


def script() -> list[FakeTurn | FakeError]:
    """Rate limit, a bash call that writes a test, a 500, a malformed call, ls, submit."""
    return [
        FakeError(status=429, message="slow down", retry_after=0.01),
        FakeTurn(
            text="Writing a first test.",
            tool_calls=[FakeToolCall(id="call_write", name="bash", arguments={"command": WRITE})],
        ),
        FakeError(status=500, message="upstream hiccup"),
        FakeTurn(tool_calls=[FakeToolCall(id="call_bad", name="bash", arguments='{"command": "ls')]),
        FakeTurn(tool_calls=[FakeToolCall(id="call_ls", name="bash", arguments={"command": "ls tests"})]),
        FakeTurn(tool_calls=[FakeToolCall(id="call_done", name="submit", arguments={"summary": "ok"})]),
    ]


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[LocalSandbox]:
    with LocalSandbox(tmp_path / "root") as box:
        box.host_path("/work").mkdir(parents=True)
        yield box


def drive(provider: str, fake: FakeLLMServer, sandbox: LocalSandbox, tmp_path: Path) -> AgentResult:
    base = fake.openai_base_url if provider == "openai" else fake.anthropic_base_url
    config = ModelConfig.model_validate(
        {
            "provider": provider,
            "model": "fake-model",
            "base_url": base,
            "api_key_env": "TF_FAKE_KEY",
            "max_retries": 2,
            "timeout": 30,
            "prices": {"fake-model": PRICE},
        }
    )
    model = make_model(config, {"TF_FAKE_KEY": "sk-fake"})
    task = make_test_task()
    return run_agent(model, sandbox, task, trajectory_path=tmp_path / "traj.json")


def assert_submitted(result: AgentResult, fake: FakeLLMServer) -> None:
    assert result.status == "submitted", result.error
    assert result.files == ["test_hello.py"]
    assert result.steps == 4
    assert result.usage.input_tokens == 400 and result.usage.output_tokens == 80
    assert result.usage.cost_usd == pytest.approx(cost_usd(PRICE, 400, 80))
    assert [r.status for r in fake.requests] == [429, 200, 500, 200, 200, 200]
    retries = [r.headers.get("x-stainless-retry-count") for r in fake.requests]
    assert retries == ["0", "1", "0", "1", "0", "0"]
    assert fake.remaining == 0


def last_body(fake: FakeLLMServer) -> dict[str, Any]:
    body = fake.requests[-1].body
    assert isinstance(body, dict)
    return body


def test_agent_openai_sdk_drives_the_loop(sandbox: LocalSandbox, tmp_path: Path) -> None:
    with FakeLLMServer(script()) as fake:
        result = drive("openai", fake, sandbox, tmp_path)
    assert_submitted(result, fake)
    first: RecordedRequest = fake.requests[0]
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer sk-fake"
    body = last_body(fake)
    assert body["model"] == "fake-model"
    assert [t["function"]["name"] for t in body["tools"]] == ["bash", "submit"]
    assert body["tools"][0]["type"] == "function"
    messages = body["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    write_call = messages[2]["tool_calls"][0]
    assert write_call == {
        "id": "call_write",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": WRITE})},
    }
    assert messages[2]["content"] == "Writing a first test."
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "call_write",
        "content": "exit code: 0\n",
    }
    assert messages[4]["tool_calls"][0]["function"]["arguments"] == '{"command": "ls'
    assert messages[5]["tool_call_id"] == "call_bad"
    assert messages[5]["content"].startswith("error: could not parse the arguments of bash")
    assert messages[7] == {
        "role": "tool",
        "tool_call_id": "call_ls",
        "content": "exit code: 0\ntest_hello.py\n",
    }


def test_agent_anthropic_sdk_drives_the_loop(sandbox: LocalSandbox, tmp_path: Path) -> None:
    with FakeLLMServer(script()) as fake:
        result = drive("anthropic", fake, sandbox, tmp_path)
    assert_submitted(result, fake)
    first = fake.requests[0]
    assert first.path == "/v1/messages"
    # older SDKs send the key as x-api-key, newer ones as a bearer token
    auth = first.headers.get("x-api-key") or first.headers.get("authorization", "")
    assert auth in ("sk-fake", "Bearer sk-fake")
    assert "anthropic-version" in first.headers
    body = last_body(fake)
    assert body["model"] == "fake-model" and body["max_tokens"] == 8192
    assert "behavioral tests" in body["system"]
    assert [t["name"] for t in body["tools"]] == ["bash", "submit"]
    assert body["tools"][0]["input_schema"]["required"] == ["command"]
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3 + ["user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Writing a first test."},
        {"type": "tool_use", "id": "call_write", "name": "bash", "input": {"command": WRITE}},
    ]
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "call_write",
            "content": "exit code: 0\n",
            "is_error": False,
        }
    ]
    assert messages[3]["content"] == [{"type": "tool_use", "id": "call_bad", "name": "bash", "input": {}}]
    bad_result = messages[4]["content"][0]
    assert bad_result["tool_use_id"] == "call_bad" and bad_result["is_error"] is True
    assert bad_result["content"].startswith("error: could not parse the arguments of bash")
    assert messages[6]["content"][0]["content"] == "exit code: 0\ntest_hello.py\n"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_agent_sdk_error_after_retries_is_an_error_record(
    provider: str, sandbox: LocalSandbox, tmp_path: Path
) -> None:
    errors = [FakeError(status=503, message="overloaded", retry_after=0.01)] * 3
    with FakeLLMServer([*script()[1:2], *errors]) as fake:
        result = drive(provider, fake, sandbox, tmp_path)
    assert result.status == "error"
    assert result.error is not None and "overloaded" in result.error
    assert result.files == ["test_hello.py"]
    assert [r.status for r in fake.requests] == [200, 503, 503, 503]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_agent_sdk_client_error_is_not_retried(provider: str, sandbox: LocalSandbox, tmp_path: Path) -> None:
    with FakeLLMServer([]) as fake:  # an empty script answers 400
        result = drive(provider, fake, sandbox, tmp_path)
    assert result.status == "error"
    assert result.error is not None and "script exhausted" in result.error
    assert len(fake.requests) == 1
