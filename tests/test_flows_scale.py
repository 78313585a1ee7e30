"""Several workers, one batch: build-many hands each source to a `build-source` deployment on a
process work pool served by two `prefect worker` processes, each with its own working folder and
no output path in common: tasks, stage results and rows go through a real S3 server on loopback
(moto), and the workers reach the Docker engine over TCP (`remote_engine`), as on other machines.
One source's flow-run process is killed in the middle of it: that source is a failed row naming
the crash, the others are built, and the store holds no task that is not whole."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_flows_docker import remove_orphans
from test_flows_worker import BIN, _start, _stop, _wait_healthy

from taskfoundry.config import Config
from taskfoundry.store import LOCAL_ENV, TASKS, Store

from conftest import ROOT, free_port, make_repo, prefect_server_env

pytestmark = [pytest.mark.docker, pytest.mark.slow]
POOL = "taskfoundry-scale-pool"
KILLED = "scalekill"  # names no other test uses: its images and containers are ours


@pytest.fixture(scope="module")
def pool(
    tmp_path_factory: pytest.TempPathFactory, s3_server: dict[str, str], remote_engine: tuple[str, Path]
) -> Iterator[tuple[str, list[Path]]]:
    """A server, the `build-source` deployment on a process pool, and two workers (one flow run
    at a time each), each in a folder of its own; yields the API URL and the two folders."""
    home = tmp_path_factory.mktemp("scale")
    port = free_port()
    env = {**prefect_server_env(home, port), **s3_server, "DOCKER_HOST": remote_engine[0]}
    url = env["PREFECT_API_URL"]
    procs = [
        _start(
            [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env,
            home / "server.log",
        )
    ]
    folders = [home / "w1", home / "w2"]
    try:
        _wait_healthy(url, procs[0], home / "server.log")
        subprocess.run(
            [str(BIN / "prefect"), "work-pool", "create", POOL, "--type", "process"],
            env=env,
            check=True,
            capture_output=True,
        )
        deploy = (
            "from prefect import flow\n"
            f"flow.from_source(source={str(ROOT)!r},"
            " entrypoint='taskfoundry/flows/many.py:build_source_flow')"
            f".to_deployment(name='build-source', work_pool_name={POOL!r}).apply()\n"
        )
        subprocess.run([str(BIN / "python"), "-c", deploy], env=env, check=True, capture_output=True)
        for folder in folders:
            folder.mkdir()
            worker_env = {**env, LOCAL_ENV: str(folder)}
            args = [
                str(BIN / "prefect"),
                "worker",
                "start",
                "--pool",
                POOL,
                "--limit",
                "1",
                "--name",
                folder.name,
            ]
            procs.append(_start(args, worker_env, home / f"{folder.name}.log"))
        yield url, folders
    finally:
        for proc in reversed(procs):
            _stop(proc)


def _flow_run_of(url: str, source: str) -> str | None:
    runs = httpx.post(f"{url}/flow_runs/filter", json={"limit": 50, "offset": 0}, timeout=10).json()
    return next((r["id"] for r in runs if r["parameters"].get("source") == source), None)


def _pid_of(flow_run_id: str) -> int | None:
    """The process running a flow run: the worker sets PREFECT__FLOW_RUN_ID in its environment."""
    wanted = f"PREFECT__FLOW_RUN_ID={flow_run_id}".encode()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and wanted in (proc / "environ").read_bytes().split(b"\0"):
                return int(proc.name)
        except OSError:
            continue
    return None


def _kill_when_building(url: str, source: str, folders: list[Path], done: threading.Event) -> list[str]:
    """SIGKILL the flow-run process of `source` once its checkout exists (its build stage is running)."""
    killed: list[str] = []
    deadline = time.monotonic() + 900
    while not done.is_set() and time.monotonic() < deadline:
        started = any(folder.glob(f"*/work/sources/local__{KILLED}.*") for folder in folders)
        run_id = _flow_run_of(url, source) if started else None
        pid = _pid_of(run_id) if run_id else None
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            killed.append(run_id or "")
            return killed
        time.sleep(0.5)
    return killed


def test_two_workers_build_one_batch_and_a_killed_source_fails_alone(
    pool: tuple[str, list[Path]], s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from test_flows_docker import TINY

    from taskfoundry.flows.many import build_many_flow

    url, folders = pool
    store_url = f"s3://tf-{uuid.uuid4().hex[:12]}/batch"
    Store.at(store_url).ensure()
    sources = [str(make_repo(tmp_path / name, TINY)) for name in ("scaleone", "scaletwo", KILLED)]
    monkeypatch.setenv(LOCAL_ENV, str(tmp_path / "batch"))
    config = Config.model_validate(
        {
            "out": store_url,
            "explorer": {"max_probes": 80},
            "mutation": {"budget": 0},
            "orchestration": {
                "deployment": "build-source/build-source",
                "concurrency": 3,
                "source_retries": 0,
            },
        }
    )
    done = threading.Event()
    killed: list[str] = []
    killer = threading.Thread(
        target=lambda: killed.extend(_kill_when_building(url, sources[2], folders, done))
    )
    killer.start()
    try:
        with temporary_settings(updates={PREFECT_API_URL: url}):
            summary = build_many_flow(sources, config)
    finally:
        done.set()
        killer.join()
        remove_orphans(KILLED)
    assert killed, "the killed source's flow run never ran"
    rows = {Path(r.source).name: r for r in summary.rows}
    assert [rows[n].status for n in ("scaleone", "scaletwo", KILLED)] == ["built", "built", "failed"], rows
    assert "Crashed" in (rows[KILLED].error or ""), rows[KILLED]
    # each worker built in its own folder, at the same time as the other
    assert {
        folder for r in summary.rows if r.task_dir for folder in folders if r.task_dir.is_relative_to(folder)
    } == set(folders)
    store = Store.at(store_url)
    assert store.published() == sorted(r.task_id for r in summary.rows if r.task_id)
    prefixes = {key.split("/")[-1] for key in store.fs.ls(store.key(TASKS), refresh=True)}
    assert prefixes == set(store.published()), "a task directory without its marker was left"
    assert store.fs.glob(store.key("runs", "build-many-*.json")) and store.get_bytes("index.json")
