"""`solve` and `run` on a program task (examples/csvq, built once per session), and attacks on
the worker's container: an agent command that probes it (uid, network, visible files) finds
no hidden test, no reference source, no build-image file, no readable gold and no network.
Each attack is run again with its defence switched off, to show the defence is what stops it.
"""

from __future__ import annotations

import json
import tarfile
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import docker
import pytest
from click.testing import CliRunner

from taskfoundry.agent.fake_server import FakeLLMServer
from taskfoundry.cli import main
from taskfoundry.layout import COV_ROOT, COVERAGE, GOLD, REFERENCE_EXECUTABLE, WORKSPACE_EXECUTABLE
from taskfoundry.models import TaskYaml, load_yaml_model
from taskfoundry.solve.batch import read_report
from taskfoundry.solve.config import Isolation
from taskfoundry.solve.drivers import CommandDriver
from taskfoundry.solve.solve import solve_task

from conftest import EXAMPLES
from solve_support import (
    KEY_ENV,
    bash,
    bridge_gateway,
    hidden_test_names,
    probe_config,
    probe_dir,
    probe_report,
    submit,
    tar_names,
    write_file,
)

pytestmark = pytest.mark.docker

TOKEN = "host-secret-7f3a"
MAIN_C = b"""#include <stdio.h>
int main(int argc, char **argv) {
    (void)argv;
    if (argc < 2) { fputs("usage: csvq COMMAND [ARGS]\\n", stderr); return 2; }
    return 0;
}
"""
COMPILE_SH = b"#!/bin/sh\nset -e\ncc -O2 -o executable main.c\n"


@pytest.fixture(scope="module")
def csvq(example_task: Callable[[str], Path]) -> Path:
    return example_task("csvq")


def source_needles() -> list[str]:
    """Lines of the reference's code (not its strings: the docs may quote messages)."""
    docs = "".join(
        p.read_text(errors="replace")
        for p in (EXAMPLES / "csvq").rglob("*")
        if p.suffix in {".md", ".1", ".txt"}
    )
    lines = {
        ln.strip()
        for src in sorted((EXAMPLES / "csvq" / "src").glob("*.c"))
        for ln in src.read_text().splitlines()
        if len(ln.strip()) >= 30 and '"' not in ln and ";" in ln
    }
    return sorted(ln for ln in lines if ln not in docs)[:12]


class _Host(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
        body = TOKEN.encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture(scope="module")
def host_server() -> Iterator[int]:
    """A server on the host (every address): a container with a network reaches it."""
    server = ThreadingHTTPServer(("0.0.0.0", 0), _Host)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def probe(
    csvq: Path, docker_client: docker.DockerClient, host_server: int, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., dict[str, Any]]:
    """`probe(name, isolation=..., image=..., before=...)`: the probe's report, each setting once."""
    names, defs = hidden_test_names(csvq)
    assert names and defs
    spec = {
        "needles": source_needles() + defs,
        "names": names,
        "paths": [GOLD, COVERAGE, COV_ROOT, "/src", "/workspace/eval"],
        "read": [WORKSPACE_EXECUTABLE, REFERENCE_EXECUTABLE],
        "connect": [bridge_gateway(docker_client), host_server],
    }
    planted = tmp_path_factory.mktemp("hidden") / "tests"
    planted.mkdir()
    for tarball in (csvq / "tests").glob("*.tar.gz"):
        with tarfile.open(tarball) as tar:
            tar.extractall(planted / tarball.name.split(".")[0], filter="data")
    reports: dict[str, dict[str, Any]] = {}

    def run(
        name: str, isolation: Isolation | None = None, image: str | None = None, before: str = ""
    ) -> dict[str, Any]:
        if name not in reports:
            tmp = tmp_path_factory.mktemp(f"probe-{name}")
            config = probe_config(probe_dir(tmp, spec, planted), isolation)
            command = before + config.agent_command
            config = config.model_copy(update={"agent_command": command})
            record = solve_task(
                csvq, tmp / "run", config, CommandDriver(command, config), docker_client, image
            )
            assert record.end_reason == "done", record
            reports[name] = probe_report(tmp / "run", csvq.name)
            assert reports[name]["scanned"] > 0
        return reports[name]

    return run


def test_worker_runs_as_the_worker_in_the_workspace(probe: Callable[..., dict[str, Any]]) -> None:
    report = probe("worker")
    assert (report["uid"], report["gid"], report["cwd"]) == (1000, 1000, "/workspace")


@pytest.mark.parametrize("defence", [True, False], ids=["worker", "defence-off-root"])
def test_the_gold_cannot_be_read(probe: Callable[..., dict[str, Any]], defence: bool) -> None:
    report = probe("worker") if defence else probe("root", Isolation(user="0:0"))
    for path in (WORKSPACE_EXECUTABLE, REFERENCE_EXECUTABLE):
        if defence:
            assert str(report["read"][path]).startswith("PermissionError"), report["read"]
        else:
            assert isinstance(report["read"][path], int) and report["read"][path] > 1000


@pytest.mark.parametrize("defence", [True, False], ids=["worker", "planted"])
def test_no_hidden_tests_in_the_container(probe: Callable[..., dict[str, Any]], defence: bool) -> None:
    """Off: the same probe after the hidden suite is copied in (as a solver that handed the
    agent the task directory would), to show the probe finds tests that are there."""
    report = probe("worker") if defence else probe("planted", before="cp -r /agent/planted /tmp/planted && ")
    defs = [n for n in report["hits"] if n.startswith("def test_")]
    if defence:
        assert (defs, report["named"], report["exists"]["/workspace/eval"]) == ([], [], False)
    else:
        assert defs and all(p.startswith("/tmp/planted/") for p in report["named"]) and report["named"]


@pytest.mark.parametrize("defence", [True, False], ids=["cleanroom", "defence-off-build-image"])
def test_no_reference_source_in_the_container(
    probe: Callable[..., dict[str, Any]], csvq: Path, defence: bool
) -> None:
    needles = source_needles()
    image = load_yaml_model(csvq / "task.yaml", TaskYaml).images.task
    report = probe("worker") if defence else probe("build-image", image=image)
    found = [n for n in needles if n in report["hits"]]
    assert found == [] if defence else len(found) == len(needles), found


@pytest.mark.parametrize("defence", [True, False], ids=["cleanroom", "defence-off-build-image"])
def test_no_build_image_files_in_the_container(
    probe: Callable[..., dict[str, Any]], csvq: Path, defence: bool
) -> None:
    image = load_yaml_model(csvq / "task.yaml", TaskYaml).images.task
    report = probe("worker") if defence else probe("build-image", image=image)
    present = [p for p in (GOLD, COVERAGE, COV_ROOT, "/src") if report["exists"][p]]
    assert present == [] if defence else present == [GOLD, COVERAGE, COV_ROOT, "/src"]


@pytest.mark.parametrize("defence", [True, False], ids=["no-network", "defence-off-network"])
def test_no_network_to_the_host(probe: Callable[..., dict[str, Any]], defence: bool) -> None:
    report = probe("worker") if defence else probe("network", Isolation(network=True))
    if defence:
        assert TOKEN not in report["connect"] and report["connect"].startswith("OSError")
        assert report["interfaces"] == ["lo"]
    else:
        assert TOKEN in report["connect"]


def test_run_a_scripted_model_on_the_program_task(
    csvq: Path,
    prefect_harness: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the real Anthropic SDK: a C program and compile.sh, built and run in the
    container, then submitted; `run` grades it (it compiles) as `eval` does."""
    monkeypatch.setenv(KEY_ENV, "sk-fake")
    script = [
        bash("ls && ./executable --help | head -5"),
        write_file("main.c", MAIN_C),
        write_file("compile.sh", COMPILE_SH),
        bash("chmod +x compile.sh && ./compile.sh && ./executable; echo exit=$?"),
        submit("a start"),
    ]
    run_dir = tmp_path / "run"
    out = csvq.parent.parent
    with FakeLLMServer(script) as fake:
        args = ["run", str(out), "--run", str(run_dir), "--model", "anthropic:fake-model"]
        args += ["--base-url", fake.anthropic_base_url, "--api-key-env", KEY_ENV, "--kind", "program"]
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    (row,) = read_report(run_dir / "report.jsonl")
    assert (row.task, row.kind, row.steps, row.end_reason) == (csvq.name, "program", 5, "done")
    names = tar_names((run_dir / csvq.name / "submission.tar.gz").read_bytes())
    assert {"compile.sh", "main.c", "README.md"} <= set(names) and "executable" not in names
    evaluation = json.loads((run_dir / csvq.name / f"{csvq.name}.eval.json").read_text())
    assert evaluation["error_code"] is None and evaluation["executable_hash"], evaluation
    assert row.tests > 0 and not row.resolved
    trajectory = json.loads((run_dir / csvq.name / "trajectory.json").read_text())
    assert "exit=2" in trajectory["steps"][3]["observations"][0]["output"]
    tasks = tmp_path / "tasks"  # `taskfoundry eval` on the same submission grades it the same
    tasks.mkdir()
    (tasks / csvq.name).symlink_to(csvq)
    graded = CliRunner().invoke(main, ["eval", str(run_dir), "--tasks", str(tasks)])
    assert graded.exit_code == 0, graded.output
    (score,) = json.loads((run_dir / "summary.json").read_text())["tasks"]
    assert (score["resolved"], score["passed"], score["tests"]) == (row.resolved, row.passed, row.tests)
