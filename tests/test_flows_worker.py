"""Scale-out as docs/orchestration.md tells it: a long-lived `prefect server start`, a process work
pool and its worker on loopback, the build flow deployed from this source tree, run on a source,
and its artifacts read back through the Prefect client. Every process started here is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from taskfoundry.sandbox.local import stop_group

from conftest import ROOT, free_port, make_repo, on_server, plumbing_config, prefect_server_env

pytestmark = [pytest.mark.docker, pytest.mark.slow]
BIN = Path(sys.executable).parent
POOL = "taskfoundry-test-pool"


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(*procs: subprocess.Popen[bytes], grace: float = 5) -> None:
    """SIGTERM to each process group at once, then `stop_group` on each with what is left of
    `grace`: one by one, a server and two workers each sat out a 20 s grace (41 s of teardown,
    issue 57), and nothing of theirs outlives the test's temporary home."""
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in procs:
        stop_group(proc, grace=max(0.0, deadline - time.monotonic()))


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail("prefect server did not answer within 3 minutes:\n" + log.read_text()[-3000:])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """`prefect server start` on a loopback port with its own PREFECT_HOME, then a process pool and
    a worker polling it every second."""
    tmp_path = tmp_path_factory.mktemp("server")
    port = free_port()
    env = prefect_server_env(tmp_path, port)
    url = env["PREFECT_API_URL"]
    procs = [
        _start(
            [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env,
            tmp_path / "server.log",
        )
    ]
    try:
        _wait_healthy(url, procs[0], tmp_path / "server.log")
        subprocess.run(
            [str(BIN / "prefect"), "work-pool", "create", POOL, "--type", "process"],
            env=env,
            check=True,
            capture_output=True,
        )
        procs.append(
            _start([str(BIN / "prefect"), "worker", "start", "--pool", POOL], env, tmp_path / "worker.log")
        )
        yield url, env
    finally:
        _stop(*reversed(procs))


def test_a_worker_runs_the_deployed_build_flow(
    server: tuple[str, dict[str, str]], tmp_path: Path, base_image: str
) -> None:
    from prefect import flow
    from prefect.deployments import run_deployment
    from test_flows_docker import NAME, TINY

    from taskfoundry.flows.artifacts import artifact_key, read_artifacts

    url, _ = server
    repo = make_repo(tmp_path / NAME, TINY)
    config = {
        **plumbing_config(explorer={"max_probes": 80}, mutation={"budget": 0}),
        "out": str(tmp_path / "out"),
    }
    with on_server(url):
        deployable = flow.from_source(source=str(ROOT), entrypoint="taskfoundry/flows/build.py:build_flow")
        # `.deploy()` would first list the pool's workers, a request this server version
        # rejects (422 on the client's null limit); `to_deployment().apply()` registers the same
        deployment = deployable.to_deployment(name="build", work_pool_name=POOL)  # type: ignore[union-attr]
        deployment.apply()  # type: ignore[union-attr]
        run = run_deployment(
            "build-task/build",
            parameters={"source": str(repo), "config": config},
            timeout=900,
            poll_interval=2,
        )
        assert run.state is not None and run.state.is_completed(), run.state  # type: ignore[union-attr]
        artifacts = read_artifacts(flow_run_id=run.id)  # type: ignore[union-attr]
    keys = {a.key for a in artifacts}
    (task_dir,) = (tmp_path / "out" / "tasks").iterdir()
    task_key = artifact_key("task", task_dir.name)
    assert {task_key, task_key + "-report"} <= keys, keys
    table = next(a.data for a in artifacts if a.key == task_key)
    assert "tests kept" in str(table) and "leak scan" in str(table)


def test_serve_registers_refresh_on_its_cron_next_to_the_other_flows(
    server: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, env = server
    (tmp_path / "c.yaml").write_text("orchestration: {refresh: {cron: '17 5 * * *'}}\n")
    proc = _start(
        [
            str(BIN / "taskfoundry"),
            "serve",
            "--config",
            str(tmp_path / "c.yaml"),
            "--out",
            str(tmp_path / "out"),
        ],
        env,
        tmp_path / "serve.log",
    )
    try:
        names, cron = _served(url, proc, tmp_path / "serve.log")
    finally:
        _stop(proc)
    assert {"refresh/refresh", "build-task/build", "build-many/build-many", "evaluate/evaluate"} <= names
    assert cron == "17 5 * * *"


def _served(url: str, proc: subprocess.Popen[bytes], log: Path) -> tuple[set[str], str | None]:
    """Deployment names (flow/deployment) on the server, and refresh's cron, once refresh is there."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        found = httpx.post(f"{url}/deployments/filter", json={"limit": 50, "offset": 0}, timeout=10).json()
        flows = {
            f["id"]: f["name"]
            for f in httpx.post(f"{url}/flows/filter", json={"limit": 50, "offset": 0}, timeout=10).json()
        }
        names = {f"{flows.get(d['flow_id'])}/{d['name']}" for d in found}
        refresh = [d for d in found if d["name"] == "refresh"]
        if refresh and len(names) >= 4:
            return names, refresh[0]["schedules"][0]["schedule"]["cron"]
        time.sleep(1)
    pytest.fail("serve registered no refresh deployment within 2 minutes:\n" + log.read_text()[-3000:])
