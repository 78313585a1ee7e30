"""Several workers, one batch: build-many hands each source to a `build-source` deployment on a
process work pool served by two `prefect worker` processes, each with its own working folder and
no output path in common: tasks, stage results and rows go through a real S3 server on loopback
(moto), and the workers reach the Docker engine over TCP (`remote_engine`), as on other machines.

Faults, one source each, killed in the middle of its build: its flow-run process (the worker
reports it Crashed: a failed row naming the crash), and a whole worker with its flow-run process
(a machine gone: nothing reports the run, the `liveness` automation crashes it once its heartbeats
stop, and with `source_retries` the other worker builds it again). Each time the store holds no
task that is not whole. A crash the worker reports is run again by the same code as one the
automation marks (build_many reads the Crashed state, not its cause): one test of the second run,
the killed worker's, proves both (issue 57: a separate retried source cost 71 s)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from test_flows_docker import TINY, remove_orphans
from test_flows_worker import BIN, _start, _stop, _wait_healthy

from taskfoundry.config import Config
from taskfoundry.flows.summary import RunSummary
from taskfoundry.store import LOCAL_ENV, TASKS, Store

from conftest import ROOT, free_port, make_repo, on_server, plumbing_config, prefect_server_env

pytestmark = [pytest.mark.docker, pytest.mark.slow]
POOL = "taskfoundry-scale-pool"
# repo names no other test uses: their images, containers and checkouts are ours
KILLED, ZOMBIE = "scalekill", "scalezombie"


@dataclass
class Pool:
    """A server, the `build-source` deployment on a process pool, and its workers by folder."""

    url: str
    env: dict[str, str]
    home: Path
    folders: list[Path]
    workers: dict[Path, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start_worker(self, folder: Path) -> None:
        """`prefect worker` (one flow run at a time) building in `folder`, its log next to it."""
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
        log = self.home / f"{folder.name}-{len(list(self.home.glob(folder.name + '-*.log')))}.log"
        self.workers[folder] = _start(args, {**self.env, LOCAL_ENV: str(folder)}, log)


@pytest.fixture(scope="module")
def pool(
    tmp_path_factory: pytest.TempPathFactory, s3_server: dict[str, str], remote_engine: tuple[str, Path]
) -> Iterator[Pool]:
    """A server, the `build-source` deployment on a process pool, and two workers (one flow run
    at a time each), each in a folder of its own."""
    home = tmp_path_factory.mktemp("scale")
    port = free_port()
    env = {**prefect_server_env(home, port), **s3_server, "DOCKER_HOST": remote_engine[0]}
    server = _start(
        [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env,
        home / "server.log",
    )
    found = Pool(env["PREFECT_API_URL"], env, home, [home / "w1", home / "w2"])
    try:
        _wait_healthy(found.url, server, home / "server.log")
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
        for folder in found.folders:
            folder.mkdir()
            found.start_worker(folder)
        yield found
    finally:
        _stop(*found.workers.values(), server)


def _flow_runs_of(url: str, source: str) -> list[dict[str, object]]:
    """The `build-source` flow runs of `source` (not their `build-task` subflows), oldest first."""
    body = {"limit": 200, "offset": 0, "sort": "EXPECTED_START_TIME_ASC"}
    runs = httpx.post(f"{url}/flow_runs/filter", json=body, timeout=10).json()
    return [r for r in runs if r["parameters"].get("source") == source and r["deployment_id"]]


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


Kill = Callable[[str, int, Path], None]  # (flow run id, its pid, the worker folder building it)


def _kill_when_building(pool: Pool, source: str, kill: Kill, done: threading.Event) -> list[str]:
    """Call `kill` on the first flow run of `source` once its checkout exists (its build stage is
    running); the killed run's id, or nothing when it never ran."""
    name = Path(source).name
    deadline = time.monotonic() + 900
    while not done.is_set() and time.monotonic() < deadline:
        folder = next((f for f in pool.folders if any(f.glob(f"*/work/sources/local__{name}.*"))), None)
        runs = _flow_runs_of(pool.url, source) if folder else []
        pid = _pid_of(str(runs[0]["id"])) if runs else None
        if folder is not None and pid is not None:
            kill(str(runs[0]["id"]), pid, folder)
            return [str(runs[0]["id"])]
        time.sleep(0.5)
    return []


def _kill_flow_run(_run: str, pid: int, _folder: Path) -> None:
    os.kill(pid, signal.SIGKILL)


def _batch(
    pool: Pool, tmp_path: Path, names: list[str], retries: int, victim: str, kill: Kill
) -> tuple[RunSummary, list[str], Store]:
    """build-many over tiny repos `names` through the pool into a fresh bucket, `kill` applied to
    the source `victim` while it builds: the summary, the killed run ids, the store."""

    from taskfoundry.flows.many import build_many_flow

    store_url = f"s3://tf-{uuid.uuid4().hex[:12]}/batch"
    Store.at(store_url).ensure()
    sources = [str(make_repo(tmp_path / name, TINY)) for name in names]
    config = Config.model_validate(
        {
            **plumbing_config(explorer={"max_probes": 80}, mutation={"budget": 0}),
            "out": store_url,
            "orchestration": {
                "deployment": "build-source/build-source",
                "concurrency": len(names),
                "source_retries": retries,
            },
        }
    )
    done = threading.Event()
    killed: list[str] = []
    target = sources[names.index(victim)]
    killer = threading.Thread(target=lambda: killed.extend(_kill_when_building(pool, target, kill, done)))
    killer.start()
    try:
        with on_server(pool.url):
            summary = build_many_flow(sources, config)
    finally:
        done.set()
        killer.join()
        remove_orphans(victim)
    assert killed, "the killed source's flow run never ran"
    return summary, killed, Store.at(store_url)


def _only_whole_tasks(store: Store, summary: RunSummary) -> None:
    assert store.published() == sorted(r.task_id for r in summary.rows if r.task_id)
    prefixes = {key.split("/")[-1] for key in store.fs.ls(store.key(TASKS), refresh=True)}
    assert prefixes == set(store.published()), "a task directory without its marker was left"
    assert store.fs.glob(store.key("runs", "build-many-*.json")) and store.get_bytes("index.json")


def test_two_workers_build_one_batch_and_a_killed_source_fails_alone(
    pool: Pool, s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCAL_ENV, str(tmp_path / "batch"))
    names = ["scaleone", "scaletwo", KILLED]
    summary, _, store = _batch(pool, tmp_path, names, 0, KILLED, _kill_flow_run)
    rows = {Path(r.source).name: r for r in summary.rows}
    assert [rows[n].status for n in names] == ["built", "built", "failed"], rows
    assert "Crashed" in (rows[KILLED].error or ""), rows[KILLED]
    # each worker built in its own folder, at the same time as the other
    assert {
        folder
        for r in summary.rows
        if r.task_dir
        for folder in pool.folders
        if r.task_dir.is_relative_to(folder)
    } == set(pool.folders)
    _only_whole_tasks(store, summary)


def _states(url: str, source: str) -> list[tuple[str, str]]:
    """(state name, message) of each flow run of `source`, oldest first."""
    return [
        (str(r["state"]["name"]), str(r["state"]["message"] or ""))  # type: ignore[index]
        for r in _flow_runs_of(url, source)
    ]


HEARTBEAT = "prefect.flow-run.heartbeat"


def _heartbeats(url: str, run_id: str) -> int:
    body = {
        "filter": {"event": {"name": [HEARTBEAT]}, "resource": {"id": [f"prefect.flow-run.{run_id}"]}},
        "limit": 5,
    }
    return len(httpx.post(f"{url}/events/filter", json=body, timeout=10).json()["events"])


def _kill_worker(pool: Pool, dead: list[Path]) -> Kill:
    """Kill the worker building a run and the run's process (a machine gone), once the server has a
    heartbeat of the run (before it, no automation could know the run was alive); then wait for
    the run to be Crashed, and fail it by hand after 5 minutes so the test ends either way."""

    def kill(run_id: str, pid: int, folder: Path) -> None:
        deadline = time.monotonic() + 300
        while not _heartbeats(pool.url, run_id):
            assert time.monotonic() < deadline, f"no heartbeat of flow run {run_id} reached the server"
            time.sleep(1)
        worker = pool.workers[folder]
        dead.append(folder)
        os.killpg(worker.pid, signal.SIGKILL)
        os.killpg(pid, signal.SIGKILL)  # the flow-run process leads a session of its own
        worker.wait()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            run = httpx.get(f"{pool.url}/flow_runs/{run_id}", timeout=10).json()
            if run["state"]["type"] != "RUNNING":
                return
            time.sleep(2)
        body = {"state": {"type": "FAILED", "message": "test: still Running 5 minutes after its worker died"}}
        httpx.post(f"{pool.url}/flow_runs/{run_id}/set_state", json={**body, "force": True}, timeout=10)

    return kill


def test_a_killed_worker_s_source_is_crashed_by_its_silence_and_built_by_the_other(
    pool: Pool, s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCAL_ENV, str(tmp_path / "batch"))
    names = ["scalealive", ZOMBIE]
    dead: list[Path] = []
    try:
        summary, _, store = _batch(pool, tmp_path, names, 1, ZOMBIE, _kill_worker(pool, dead))
    finally:
        for folder, worker in pool.workers.items():
            if worker.poll() is not None:
                pool.start_worker(folder)  # the next tests have two workers again
    rows = {Path(r.source).name: r for r in summary.rows}
    assert [rows[n].status for n in names] == ["built", "built"], rows
    states = _states(pool.url, rows[ZOMBIE].source)
    assert [name for name, _ in states] == ["Crashed", "Completed"], states
    assert "no heartbeat" in states[0][1], states
    (alive,) = set(pool.folders) - set(dead)
    assert rows[ZOMBIE].task_dir and rows[ZOMBIE].task_dir.is_relative_to(alive), rows[ZOMBIE]
    _only_whole_tasks(store, summary)
