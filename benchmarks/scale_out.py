"""Scale-out: build csvq, logsum and rcalc with one worker, then with two, as
docs/orchestration.md sets it up on N machines, here all on loopback: a `prefect server`, a
process work pool, the `build-source` deployment, workers each in a folder of its own
(`TASKFOUNDRY_LOCAL`, `--limit 1`), and a moto S3 server as the object store OUT. Prints each
wall time and their ratio.

    .venv/bin/python benchmarks/scale_out.py [--max-probes N] [--mutants N]

Each run uses a fresh bucket and `--fresh` semantics (no stage results to reuse); images are
content-addressed, so an untimed priming run builds them first. On a 2-core machine the
ratio is bounded by the cores: two workers share them, so it shows the workers overlapping,
not the speed-up of N machines.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from taskfoundry.sandbox.local import stop_group

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
EXAMPLES = [str(ROOT / "examples" / name) for name in ("csvq", "logsum", "rcalc")]
POOL = "taskfoundry-bench"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as sink:
        return subprocess.Popen(args, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    stop_group(proc)


def _wait(url: str, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.5)
    raise SystemExit(f"{url} did not answer within {seconds:.0f} s")


def _wait_workers(api: str, names: set[str], seconds: float = 180) -> None:
    """Until every worker of `names` has registered with the server, so the timing starts with
    them polling (their start-up is not timed)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = httpx.post(f"{api}/work_pools/{POOL}/workers/filter", json={}, timeout=10).json()
        if names <= {w["name"] for w in found}:
            return
        time.sleep(0.5)
    raise SystemExit(f"workers {sorted(names)} did not register within {seconds:.0f} s")


def batch(env: dict[str, str], home: Path, workers: int, args: argparse.Namespace) -> float:
    """Wall seconds of one build-many over the examples with `workers` workers."""
    label = uuid.uuid4().hex[:10]  # names this run's bucket and workers (a stopped worker stays listed)
    names = [f"w{i}-{label}" for i in range(workers)]
    procs = [
        _start(
            [str(BIN / "prefect"), "worker", "start", "--pool", POOL, "--limit", "1", "--name", name],
            {**env, "TASKFOUNDRY_LOCAL": str(home / name)},
            home / f"{name}.log",
        )
        for name in names
    ]
    bucket = f"s3://bench-{label}"
    config = home / f"run{workers}.yaml"
    config.write_text(
        f"out: {bucket}/tf\norchestration: {{deployment: build-source/build-source, concurrency: 3}}\n"
    )
    try:
        subprocess.run(
            [str(BIN / "python"), "-c", f"import fsspec; fsspec.filesystem('s3').mkdir({bucket[5:]!r})"],
            env=env,
            check=True,
        )
        _wait_workers(env["PREFECT_API_URL"], set(names))
        start = time.monotonic()
        done = subprocess.run(
            [
                str(BIN / "taskfoundry"),
                "build-many",
                *EXAMPLES,
                "--config",
                str(config),
                "--no-progress",
                "--max-probes",
                str(args.max_probes),
                "--mutants",
                str(args.mutants),
            ],
            env={**env, "TASKFOUNDRY_LOCAL": str(home / f"batch-{label}")},
            capture_output=True,
            text=True,
        )
        seconds = time.monotonic() - start
        print(done.stdout[-2000:], file=sys.stderr)
        if done.returncode != 0:
            raise SystemExit(f"build-many with {workers} worker(s) failed:\n{done.stderr[-3000:]}")
        return seconds
    finally:
        for proc in procs:
            _stop(proc)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--max-probes", type=int, default=150, help="explorer probe budget of each source")
    parser.add_argument("--mutants", type=int, default=0, help="mutation analysis budget (0: none)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="scale-out-"))
    s3_port, api_port = _port(), _port()
    api = f"http://127.0.0.1:{api_port}/api"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{s3_port}",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "PREFECT_HOME": str(home / "prefect"),
        "PREFECT_API_URL": api,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
    }
    services = [
        _start(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(s3_port)], env, home / "s3.log"
        ),
        _start(
            [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(api_port)],
            env,
            home / "server.log",
        ),
    ]
    try:
        _wait(f"http://127.0.0.1:{s3_port}")
        _wait(f"{api}/health")
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
        subprocess.run([str(BIN / "python"), "-c", deploy], env=env, check=True)
        batch(env, home, 2, args)  # priming: images built once, untimed
        one = batch(env, home, 1, args)
        two = batch(env, home, 2, args)
    finally:
        for proc in reversed(services):
            _stop(proc)
    cores = os.cpu_count()
    print(f"1 worker:  {one:.1f} s wall\n2 workers: {two:.1f} s wall")
    print(f"ratio (1 worker / 2 workers): {one / two:.2f}")
    print(
        f"on {cores} cores the ratio is bounded by the cores: the two workers share them (and one source's "
        "stages already use both at times), so it shows the workers overlapping, not the speed-up of "
        "2 machines"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
