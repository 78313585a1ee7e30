"""What Prefect costs: time from command to first stage with the embedded server, cold and
warm, and the wall time of build-many over the examples at concurrency 1 and 2. Every command is
the real CLI in a subprocess, as an author would run it.

    .venv/bin/python benchmarks/flow_overhead.py [--out DIR] [--max-probes N] [--repeat N]
        [--first-stage-only]

Command to first stage: from spawning `taskfoundry -v build examples/csvq` to the start of its
source stage (the time the `stage source done in X s` line arrives, less X).
- cold, new home: the first run in a fresh PREFECT_HOME, as a new user's first command: the
  embedded server creates and migrates the SQLite database and registers Prefect's block types.
- cold, new home and bytecode: the same with an empty PYTHONPYCACHEPREFIX, so the command and
  its server compile every module they import from source (a fresh checkout, or caches wiped).
  The operating system's file cache is not dropped (the machine is shared).
- warm: repeated runs in one PREFECT_HOME, after one untimed run made its database.

With --first-stage-only only the time to the first stage is measured: no priming, no batch,
and each build is stopped once its source stage has run (SIGTERM to its process group, SIGKILL
after STOP_GRACE seconds), so no Docker work is timed.

The batch runs use --fresh (every stage runs; images are content-addressed and reused, so
they are built once, by an untimed priming run). The first-stage runs build csvq into the
primed output dir, where every stage resumes from its cached result: what is left is overhead.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).with_name("taskfoundry"))
EXAMPLES = [str(ROOT / "examples" / name) for name in ("csvq", "logsum", "rcalc")]
FIRST_STAGE = re.compile(r"stage source (?:done|cached) in ([0-9.]+)s")


STOP_GRACE = 20.0  # seconds a stopped build has to record its crashed run and stop its server


def _env(prefect_home: Path, pycache: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    if pycache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return {
        **env,
        "PREFECT_HOME": str(prefect_home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        # a loaded machine can take longer than Prefect's default 20 s to start the server
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    }


def _stop(proc: subprocess.Popen[str]) -> None:
    """End the CLI's process group: SIGTERM (Prefect records the run as crashed), then SIGKILL."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        print(f"build {proc.pid} still running {STOP_GRACE:.0f} s after SIGTERM: killed", file=sys.stderr)
    with contextlib.suppress(ProcessLookupError):  # what is left of the group (a server, say)
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def first_stage(
    out: Path, prefect_home: Path, max_probes: int, stop: bool = False, pycache: Path | None = None
) -> tuple[float, float]:
    """(seconds from spawn to the start of the source stage, seconds of the whole command);
    with `stop` the command is ended once its first stage has run (whole command: nan)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [
            CLI,
            "-v",
            "build",
            EXAMPLES[0],
            "--out",
            str(out),
            "--no-progress",
            "--max-probes",
            str(max_probes),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(prefect_home, pycache),
        start_new_session=True,
    )
    assert proc.stderr is not None
    to_first = float("nan")
    for line in proc.stderr:
        match = FIRST_STAGE.search(line)
        if match and to_first != to_first:
            to_first = time.monotonic() - start - float(match.group(1))
            if stop:
                # read on to the end, so a full pipe cannot block the build's last records
                threading.Thread(target=proc.stderr.read, daemon=True).start()
                _stop(proc)
                return to_first, float("nan")
    if proc.wait() != 0:
        raise SystemExit(f"build failed (exit {proc.returncode})")
    return to_first, time.monotonic() - start


def batch(out: Path, prefect_home: Path, concurrency: int, max_probes: int, fresh: bool) -> float:
    start = time.monotonic()
    args = [
        CLI,
        "build-many",
        *EXAMPLES,
        "--out",
        str(out),
        "--concurrency",
        str(concurrency),
        "--max-probes",
        str(max_probes),
        "--no-progress",
        *(["--fresh"] if fresh else []),
    ]
    proc = subprocess.run(args, env=_env(prefect_home), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(
            f"build-many failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return time.monotonic() - start


def _seconds(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "tf-bench-flow")
    parser.add_argument("--max-probes", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each first-stage measurement")
    parser.add_argument("--first-stage-only", action="store_true", help="skip the batch timings")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    homes = args.out / "prefect-homes"
    homes.mkdir(parents=True)
    shared = homes / "shared"
    walls: dict[int, float] = {}
    stop = args.first_stage_only
    if stop:  # one untimed run makes the shared PREFECT_HOME's database: the later runs are warm
        first_stage(args.out, shared, args.max_probes, stop)
    else:
        print(
            f"priming (images, one untimed batch): {batch(args.out, shared, 2, args.max_probes, False):.1f} s"
        )
        walls = {c: batch(args.out, shared, c, args.max_probes, True) for c in (1, 2)}
    rows: dict[str, list[tuple[float, float]]] = {"cold, new home": [], "cold, new home and bytecode": []}
    for i in range(args.repeat):  # interleaved, so a change in the machine's load touches every row
        rows["cold, new home"].append(first_stage(args.out, homes / f"cold{i}", args.max_probes, stop))
        pycache = args.out / f"pycache{i}"
        rows["cold, new home and bytecode"].append(
            first_stage(args.out, homes / f"coldpyc{i}", args.max_probes, stop, pycache)
        )
    rows["warm"] = [first_stage(args.out, shared, args.max_probes, stop) for _ in range(args.repeat)]
    print(f"\n{args.repeat} runs | command -> first stage: median (min-max) | whole command (stages cached)")
    print("---|---|---")
    for label, runs in rows.items():
        firsts = [r[0] for r in runs]
        print(
            f"{label} | {statistics.median(firsts):.1f} s ({min(firsts):.1f}-{max(firsts):.1f}) | "
            f"{_seconds(statistics.median(r[1] for r in runs))}"
        )
    if not walls:
        return
    print(f"\nbuild-many over {len(EXAMPLES)} examples, --fresh, --max-probes {args.max_probes}")
    print("concurrency | wall time\n---|---")
    for concurrency, wall in walls.items():
        print(f"{concurrency} | {wall:.1f} s")


if __name__ == "__main__":
    main()
