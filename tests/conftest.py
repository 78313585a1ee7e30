"""Shared fixtures. Docker tests skip without an engine, except in CI, where that fails."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from taskfoundry.agent import AgentTask
from taskfoundry.agent.prompts import load_template

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _engine_error() -> str | None:
    try:
        from taskfoundry.sandbox.docker import docker_client

        docker_client().close()
        return None
    except Exception as exc:  # noqa: BLE001 - any reason the engine is out of reach
        return str(exc)


# `make test` runs the suite on three xdist workers (`-n 3 --dist loadfile`). Each module goes
# whole to one worker, so its module- and session-scoped builds are made once per run; modules
# that share such a build share a group, so that one worker makes it: the users of the csvq
# example task (test_leak_real_images scans the cleanroom images example builds leave, so it runs
# after them, as in a serial run), and the flowtiny modules (one repository name, whose orphaned
# sandboxes test_flows_docker removes), and the users of the function and featlib tasks (their
# tests and `solve`'s). logsum and rcalc are built by a module of their own.
EXAMPLE_MODULES = [
    "test_catalog_docker",
    "test_e2e",
    "test_eval_docker",
    "test_eval_gold_docker",
    "test_replay_attack_docker",
    "test_leak_real_images",
    "test_harness_docker",
]
SHARED_GROUPS = {
    **dict.fromkeys([*EXAMPLE_MODULES, "test_solution_docker", "test_solve_program_docker"], "example-csvq"),
    **dict.fromkeys(["test_function_docker", "test_solve_function_docker"], "function-tasks"),
    **dict.fromkeys(["test_feature_docker", "test_solve_feature_docker"], "featlib-tasks"),
    "test_flows_docker": "flowtiny",
    "test_flows_worker": "flowtiny",
}


def module_group(nodeid: str) -> str:
    """The group of a test: its module, or the group its module shares."""
    module = Path(nodeid.split("::", 1)[0]).stem
    return SHARED_GROUPS.get(module, module)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: a run without xdist has no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` with SHARED_GROUPS: xdist's own loadfile scheduler, grouping by module_group
    and handing groups out in the order the workers collected them (see order_for_workers)."""
    if config.getvalue("dist") != "loadfile":
        return None
    config.option.loadscopereorder = False
    from xdist.scheduler import LoadScopeScheduling

    class ModuleGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return module_group(nodeid)

    return ModuleGroups(config, log)


def _weight(group: list[pytest.Item]) -> int:
    """Groups that build whole tasks first, then other Docker ones: the long ones start early."""
    if any(item.get_closest_marker("slow") for item in group):
        return 0
    return 1 if any(item.get_closest_marker("docker") for item in group) else 2


def order_for_workers(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, the long groups first (the controller hands groups out in this order);
    a serial run keeps the order it collected."""
    if not hasattr(config, "workerinput"):
        return
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        groups.setdefault(module_group(item.nodeid), []).append(item)
    ordered = sorted(groups.values(), key=_weight)  # stable: collection order within a weight
    items[:] = [item for group in ordered for item in group]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    order_for_workers(config, items)
    if not any(item.get_closest_marker("docker") for item in items):
        return
    error = _engine_error()
    if error is None:
        return
    if os.environ.get("CI") == "true":
        raise pytest.UsageError(f"CI=true but no Docker engine is reachable: {error}")
    skip = pytest.mark.skip(reason=f"no Docker engine: {error}")
    for item in items:
        if item.get_closest_marker("docker"):
            item.add_marker(skip)


# Every run keeps each test's phase times (set-up, call, teardown) and the worker that ran it in
# out/test-times/phases.jsonl, for benchmarks/test_times.py: where the suite's time goes. Only the
# controller writes (xdist hands it every worker's reports).
PHASES = ROOT / "out" / "test-times" / "phases.jsonl"


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        PHASES.parent.mkdir(parents=True, exist_ok=True)
        PHASES.write_text("")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    row = {"nodeid": report.nodeid, "when": report.when, "seconds": round(report.duration, 3)}
    row["worker"] = getattr(report, "node", None) and report.node.gateway.id  # type: ignore[attr-defined]
    row["outcome"] = report.outcome
    with PHASES.open("a") as out:
        out.write(json.dumps(row) + "\n")


@pytest.fixture(scope="session")
def docker_client():  # type: ignore[no-untyped-def]
    from taskfoundry.sandbox.docker import docker_client as make

    client = make()
    yield client
    client.close()


@pytest.fixture(scope="session")
def base_image(docker_client) -> str:  # type: ignore[no-untyped-def]
    from taskfoundry.images.base import BaseImageConfig, ensure_base_image

    return ensure_base_image(BaseImageConfig(), docker_client)


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect server for the whole session (its start-up takes seconds)."""
    from prefect.testing.utilities import prefect_test_harness

    import taskfoundry.flows  # noqa: F401 - its Prefect defaults (no telemetry) reach this server too

    with prefect_test_harness(server_startup_timeout=120):
        yield


# 20 mutants: the stage runs, briefly, without its guided step (tests/example-build.yaml says why)
EXAMPLE_FLAGS = [
    "--max-probes",
    "200",
    "--mutants",
    "20",
    "--config",
    str(ROOT / "tests" / "example-build.yaml"),
]


@contextmanager
def on_server(url: str) -> Iterator[None]:
    """Prefect's client settings pointed at another server (a test's own) for the block, and
    the process's event and log queues flushed to it before the block ends. Left queued, they
    stay bound to that server after it stops, and the session's harness drains them at its
    teardown at about one client timeout (60 s) an event (issue 57: a worker sat 5 minutes there)."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: url}):
        try:
            yield
        finally:
            EventsWorker.drain_all(timeout=30)
            APILogWorker.drain_all(timeout=30)


# the plumbing tests' builds (tests/plumbing-build.yaml says what they leave out and why)
PLUMBING_YAML = ROOT / "tests" / "plumbing-build.yaml"
PLUMBING: dict[str, Any] = yaml.safe_load(PLUMBING_YAML.read_text())


def plumbing_config(**sections: dict[str, Any]) -> dict[str, Any]:
    """PLUMBING as a config dict, each of `sections` merged into its section."""
    return {**PLUMBING, **{name: {**PLUMBING.get(name, {}), **keys} for name, keys in sections.items()}}


# logsum and rcalc serve test_solution_go_rust_docker (the reference scores one, the cleanroom
# is clean): a smaller suite does, on tests/example-small.yaml (the last --config is the one read)
SMALL_BUILD = ["--max-probes", "80", "--mutants", "6", "--config", str(ROOT / "tests" / "example-small.yaml")]
FEW_MUTANTS = {"logsum": SMALL_BUILD, "rcalc": SMALL_BUILD}


@pytest.fixture(scope="session")
def example_task(prefect_harness, base_image, tmp_path_factory):  # type: ignore[no-untyped-def]
    """`example_task(name)`: examples/<name> built once per session (EXAMPLE_FLAGS, FEW_MUTANTS);
    its task dir."""
    from click.testing import CliRunner

    from taskfoundry.cli import main

    built: dict[str, Path] = {}

    def build(name: str) -> Path:
        if name not in built:
            out = tmp_path_factory.mktemp(f"example-{name}")
            args = [
                "build",
                str(EXAMPLES / name),
                "--out",
                str(out),
                *EXAMPLE_FLAGS,
                *FEW_MUTANTS.get(name, []),
            ]
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 0, result.output + repr(result.exception)
            (built[name],) = (out / "tasks").iterdir()
        return built[name]

    return build


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A tiny committed git repository: a fixture builder, not a large fixture."""
    import subprocess

    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *cmd], cwd=path, check=True, env=env)
    return path


def make_test_task(workdir: str = "/work") -> AgentTask:
    """An agent task that asks for pytest files in /work/tests, with the test generator's prompts."""
    return AgentTask(
        workdir=workdir,
        output_dir="/work/tests",
        outputs=["test_*.py", "*_test.py"],
        system=load_template("taskfoundry.kinds.program.testgen", "system.md"),
        prompt=load_template("taskfoundry.kinds.program.testgen", "task.md"),
        variables={"executable": "/work/prog", "tests_dir": "/work/tests", "context": ""},
    )


@pytest.fixture(scope="session")
def function_tasks(prefect_harness, base_image, tmp_path_factory):  # type: ignore[no-untyped-def]
    """examples/pyfuncs built once per session with `--kind function`: (out dir, task dirs)."""
    from click.testing import CliRunner

    from taskfoundry.cli import main

    out = tmp_path_factory.mktemp("function-pyfuncs")
    result = CliRunner().invoke(
        main, ["build", str(EXAMPLES / "pyfuncs"), "--out", str(out), "--kind", "function"]
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out, sorted((out / "tasks").iterdir())


@pytest.fixture(scope="session")
def featlib_tasks(prefect_harness, base_image, tmp_path_factory):  # type: ignore[no-untyped-def]
    """examples/featlib built once per session by the feature kind's flow, with thresholds low
    enough for a small library and one feature kept (the first that validates): its task dirs."""
    from taskfoundry.config import Config
    from taskfoundry.flows.build import build_flow

    out = tmp_path_factory.mktemp("featlib")
    feature = {"min_removed_lines": 3, "min_f2p": 3, "max_tasks": 1}
    return sorted(build_flow(str(EXAMPLES / "featlib"), Config(out=out, kind="feature", feature=feature)))


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prefect_server_env(home: Path, port: int) -> dict[str, str]:
    """The environment of a `prefect server start` on a loopback port, and of its workers."""
    return {
        **os.environ,
        "PREFECT_HOME": str(home / "prefect-home"),
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_WORKER_PREFETCH_SECONDS": "1",
    }


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A real S3-compatible server (moto in server mode) on a loopback port, for the session;
    yields the standard variables that point s3fs (and so `--out s3://...`) at it."""
    import subprocess
    import sys
    import time

    import httpx

    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "moto server did not answer within 60 s"
                time.sleep(0.2)
        yield {
            "AWS_ENDPOINT_URL": url,
            "AWS_ACCESS_KEY_ID": "taskfoundry-test",
            "AWS_SECRET_ACCESS_KEY": "taskfoundry-test",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture()
def s3_env(s3_server: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The S3 variables set in this process for one test (and given to what it starts)."""
    for key, value in s3_server.items():
        monkeypatch.setenv(key, value)
    return s3_server


@pytest.fixture(scope="session")
def remote_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The Docker engine as a remote one: its unix socket forwarded to a loopback TCP port by
    tests/engine_forward.py. Yields the DOCKER_HOST to set and the file counting connections."""
    import subprocess
    import sys
    import time

    socket = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock").removeprefix("unix://")
    if socket.startswith(("tcp://", "ssh://")):
        pytest.skip(f"the engine is already remote ({socket})")
    port = free_port()
    counter = tmp_path_factory.mktemp("engine") / "connections"
    counter.write_text("0")
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("engine_forward.py")), str(port), socket, str(counter)]
    )
    host = f"tcp://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, "engine_forward.py ended"
            try:
                import docker

                docker.DockerClient(base_url=host).ping()
                break
            except Exception:  # noqa: BLE001 - not listening yet
                assert time.monotonic() < deadline, "the forwarded engine did not answer within 30 s"
                time.sleep(0.2)
        yield host, counter
    finally:
        proc.terminate()
        proc.wait(timeout=20)
