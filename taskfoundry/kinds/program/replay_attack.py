"""The no-logic attack on a packaged program task, as a worker would make it.

With only what a worker has (the cleanroom image: the gold at /workspace/executable, its docs)
and this project's public code: capture the help text, draw the explorer's candidate probes
from the docs with the public default seeds, run each on the gold inside the cleanroom, and
submit a program that replays the recorded outcomes (by exact call, and with the argv-only
fallback); also the gold's version text and its help text for every call, and a program that
does nothing. `benchmarks/replay_attack.py` prints what each scores; tests run it small.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

import docker

from taskfoundry.errors import SandboxError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.summary import score_task
from taskfoundry.grading.task import TaskSpec, evaluate_task
from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen.explorer import RuntimeData, public_probes
from taskfoundry.kinds.program.testgen.help import capture_usage
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob, install_runner, run_probes
from taskfoundry.kinds.program.testgen.replay import (
    HELP_ARGS,
    VERSION_ARGS,
    ReplayTable,
    render_replay,
    replay_table,
)
from taskfoundry.layout import WORKSPACE, WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

NOTHING = b"#!/bin/sh\nexit 0\n"
CHUNK = 100  # probes a runner exec takes (one exec's output stays under the sandbox's cap)


def attacker_table(
    client: docker.DockerClient,
    image: str,
    per_seed: int,
    seeds: Sequence[int] = (0, 1),
    program: str = "",
) -> ReplayTable:
    """The gold's outcomes, in the cleanroom `image` as its worker, on the first `per_seed`
    public probes of each seed drawn from the cleanroom's own docs."""
    config = ExplorerConfig(seed=None, public_seeds=list(seeds))
    with (
        tempfile.TemporaryDirectory(prefix="tf-attack-") as tmp,
        DockerSandbox(image, SandboxLimits(), client=client) as box,
    ):
        docs = Path(tmp) / "workspace"
        box.get_dir(WORKSPACE, docs)
        install_runner(box)
        usage = capture_usage(box, WORKSPACE_EXECUTABLE)
        names = {n for n in (program, "executable") if n}
        probes = public_probes(config, RuntimeData([], {}, []), docs, names, usage, per_seed)
        job = RunnerJob(executable=WORKSPACE_EXECUTABLE, timeout=5.0)
        outcomes = [
            out for i in range(0, len(probes), CHUNK) for out in _run(box, job, probes[i : i + CHUNK])
        ]
    return replay_table(probes, outcomes, list(seeds))


def _run(box: DockerSandbox, job: RunnerJob, probes: list[Probe]) -> list[Outcome]:
    """The gold's outcomes on `probes`; a chunk whose output passes the sandbox's cap (figlet's
    banners) is recorded as not run, as an attacker would skip it."""
    try:
        return run_probes(box, job, probes)
    except SandboxError:
        return [Outcome(0, None, None, True, True, {}, not_run=True) for _ in probes]


def attacks(table: ReplayTable) -> dict[str, bytes]:
    """The no-logic submissions' programs, by name."""
    exact = table.model_copy(update={"argv": {}, "shape": {}})
    found = {
        "nothing": NOTHING,
        "replay_exact": render_replay(exact),
        "replay_fallback": render_replay(table.model_copy(update={"shape": {}})),
        "replay_shape": render_replay(table),  # the fallback, then argv without its files' names
    }
    for name, args in (("version", VERSION_ARGS), ("help", HELP_ARGS)):
        at = table.outcome_of(args)
        if at is not None:
            found[name] = render_replay(table, always=at)
    return found


def submission(program: bytes, dest: Path) -> Path:
    """A submission whose compile.sh installs `program` as ./executable."""
    script = b"#!/bin/sh\ncp program.bin executable && chmod +x executable\n"
    with tarfile.open(dest, "w:gz") as tar:
        for name, data, mode in (("program.bin", program, 0o644), ("compile.sh", script, 0o755)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return dest


def grade(spec: TaskSpec, program: bytes, client: docker.DockerClient) -> tuple[int, int]:
    """(passed, tests) of `program` submitted to the task, through the real grader."""
    expected = {b: spec.expected(b) for b in spec.branches}
    with tempfile.TemporaryDirectory(prefix="tf-attack-") as tmp:
        path = submission(program, Path(tmp) / "submission.tar.gz")
        result = evaluate_task(spec, path, EvalConfig(attempts=1), client)
    score = score_task(spec.task_id, expected, result, 0.95)
    return score.passed, score.tests
