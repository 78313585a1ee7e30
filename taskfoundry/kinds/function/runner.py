"""Runs fn_runner.py over many functions in one sandbox container (no network, limited)."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker

from taskfoundry.assets import asset
from taskfoundry.errors import SandboxError
from taskfoundry.kinds.function.env import PYTHON
from taskfoundry.kinds.function.settings import FunctionConfig
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

RUNNER_FILES = ("fn_runner.py", "fcall.py", "fcodec.py")
WORK = "/work/fns"


def runner_config(cfg: FunctionConfig) -> dict[str, Any]:
    return {
        "max_cases": cfg.max_cases,
        "rounds": cfg.rounds,
        "seed": cfg.seed or 0,
        "examples": cfg.examples,
        "call_timeout": cfg.call_timeout,
        "budget": cfg.budget,
    }


def run_functions(
    image: str,
    mode: str,
    items: list[tuple[str, dict[str, str]]],
    cfg: FunctionConfig,
    client: docker.DockerClient,
    read: Callable[[str, dict[str, Any]], None],
) -> float:
    """`items`: (id, {file name: text}) per function; `read(id, result)` gets each
    `<mode>.json`. Every function runs in its own process, killed past `function_timeout`.
    Returns the CPU seconds the functions' processes used in the sandbox."""
    if not items:
        return 0.0
    limits = SandboxLimits(memory_mb=cfg.memory_mb, pids=512, output_bytes=1024 * 1024)
    waves = math.ceil(len(items) / max(cfg.jobs, 1))
    timeout = waves * cfg.function_timeout + 60
    with tempfile.TemporaryDirectory(prefix="tf-fn-") as tmp:
        root = Path(tmp) / "fns"
        for ident, files in items:
            for name, text in files.items():
                (root / ident).mkdir(parents=True, exist_ok=True)
                (root / ident / name).write_text(text)
        (root / "config.json").write_text(json.dumps(runner_config(cfg)))
        for name in RUNNER_FILES:
            (root / "runner" / name).parent.mkdir(exist_ok=True)
            (root / "runner" / name).write_bytes(asset(f"function/{name}"))
        with DockerSandbox(image, limits, workdir="/work", client=client) as box:
            box.put_dir(root, WORK)
            box.exec(f"chown -R 1000:1000 {WORK}", timeout=60, user="0:0")
            argv = [PYTHON, f"{WORK}/runner/fn_runner.py", "drive", mode, WORK]
            argv += ["--timeout", str(cfg.function_timeout), "--jobs", str(cfg.jobs)]
            res = box.exec(argv, timeout=timeout)
            if not res.ok:
                raise SandboxError(f"fn_runner {mode} failed (exit {res.exit_code}): {res.text()[-2000:]}")
            out = Path(tmp) / "out"
            box.get_dir(WORK, out)
        for ident, _ in items:
            path = out / ident / f"{mode}.json"
            read(ident, json.loads(path.read_text()) if path.is_file() else {"drop": "no_result"})
        usage = out / f"{mode}-usage.json"
        return float(json.loads(usage.read_text())["cpu_seconds"]) if usage.is_file() else 0.0
