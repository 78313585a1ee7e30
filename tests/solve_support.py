"""Helpers of the solve tests: scripts that work a task through tool calls, configs, probes."""

from __future__ import annotations

import base64
import io
import ipaddress
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import docker

from taskfoundry.agent.config import ModelConfig, Price
from taskfoundry.agent.fake_formats import FakeError, FakeToolCall, FakeTurn
from taskfoundry.solve.config import Isolation, SolveConfig
from taskfoundry.solve.records import TRAJECTORY

KEY_ENV = "TF_FAKE_KEY"
PRICE = Price(input_per_mtok=3, output_per_mtok=15)
PROBE = Path(__file__).parent / "solve_probe.py"


def bash(command: str) -> FakeTurn:
    return FakeTurn(tool_calls=[FakeToolCall(name="bash", arguments={"command": command})])


def submit(summary: str = "done") -> FakeTurn:
    return FakeTurn(tool_calls=[FakeToolCall(name="submit", arguments={"summary": summary})])


def write_file(path: str, data: bytes) -> FakeTurn:
    """A bash call that writes `data` to `path` (base64: any bytes survive the JSON and sh)."""
    return bash(f"echo {base64.b64encode(data).decode()} | base64 -d > {path}")


def solution_files(task_dir: Path) -> dict[str, bytes]:
    """The task's reference submission: what a model that solves the task would write."""
    with tarfile.open(task_dir / "solution.tar.gz") as tar:
        return {
            m.name.removeprefix("./"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def function_script(task_dir: Path, retry: bool = True) -> list[FakeTurn | FakeError]:
    """Look, write the reference's candidate.py, check it imports, submit; after a 429 first."""
    code = solution_files(task_dir)["candidate.py"]
    turns: list[FakeTurn | FakeError] = [FakeError(status=429, retry_after=0.01)] if retry else []
    return turns + [
        bash("id -u && cat $TF_PROMPT && ls -la"),
        write_file("candidate.py", code),
        bash("python3 -c 'import candidate' && echo imported"),
        submit("wrote candidate.py"),
    ]


def model_config(provider: str, base_url: str) -> ModelConfig:
    return ModelConfig(
        provider=provider,  # type: ignore[arg-type]
        model="fake-model",
        base_url=base_url,
        api_key_env=KEY_ENV,
        max_retries=2,
        timeout=60,
        prices={"fake-model": PRICE},
    )


def probe_dir(tmp: Path, spec: dict[str, Any], extra: Path | None = None) -> Path:
    """An agent folder: the probe and its spec (and `extra`, a folder planted beside them)."""
    agent = tmp / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROBE, agent / PROBE.name)
    (agent / "spec.json").write_text(json.dumps(spec))
    if extra is not None:
        shutil.copytree(extra, agent / "planted" / extra.name)
    return agent


def probe_config(agent: Path, isolation: Isolation | None = None) -> SolveConfig:
    return SolveConfig(
        agent_command=f"python3 /agent/{PROBE.name} /agent/spec.json",
        agent_dir=str(agent),
        time_limit=600,
        isolation=isolation or Isolation(),
    )


def probe_report(run_dir: Path, task_id: str) -> dict[str, Any]:
    trajectory = json.loads((run_dir / task_id / TRAJECTORY).read_text())
    (line,) = [x for x in trajectory["stdout"].splitlines() if x.startswith("PROBE ")]
    report: dict[str, Any] = json.loads(line.removeprefix("PROBE "))
    return report


def hidden_test_names(task_dir: Path) -> tuple[list[str], list[str]]:
    """(file names, `def test_...` lines) of the task's hidden suite, from its branch tarballs."""
    names, defs = set(), set()
    for tarball in (task_dir / "tests").glob("*.tar.gz"):
        with tarfile.open(tarball) as tar:
            for m in tar.getmembers():
                base = m.name.rsplit("/", 1)[-1]
                if m.isfile() and base.startswith("test_") and base.endswith(".py"):
                    names.add(base)
                    text = tar.extractfile(m).read().decode(errors="replace")  # type: ignore[union-attr]
                    defs |= {ln.strip() for ln in text.splitlines() if ln.startswith("def test_")}
    return sorted(names), sorted(defs)


def tar_names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return [m.name.removeprefix("./") for m in tar.getmembers()]


def bridge_gateway(client: docker.DockerClient) -> str:
    """The host's address on Docker's default bridge: where a container with a network finds
    a server the host runs."""
    (config, *_) = client.networks.get("bridge").attrs["IPAM"]["Config"]
    if "Gateway" in config:
        return str(config["Gateway"])
    return str(next(ipaddress.ip_network(config["Subnet"]).hosts()))  # the engine's default
