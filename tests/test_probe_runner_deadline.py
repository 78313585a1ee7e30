"""The probe runner starts no probe past its job's `stop_at`: one exec of a slow program's
many probes (the guided search's group of mutants) ran 15 minutes past the stage's deadline.

The real runner script, run on the host, on a program that takes a second a call and logs
each call it gets."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskfoundry.assets import asset
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob, _outcome

PROBES = 8


def _run(tmp_path: Path, stop_at: float) -> tuple[list[Outcome], int]:
    """The runner on PROBES probes of a one-second program: outcomes, and calls the program got."""
    log = tmp_path / "calls.log"
    program = tmp_path / "slow"
    program.write_text(f'#!/bin/sh\necho "$1" >> {log}\nsleep 1\necho "done $1"\n')
    program.chmod(0o755)
    (tmp_path / "runs").mkdir()
    job = RunnerJob(
        executable=str(program), argv0=str(program), workroot=str(tmp_path / "runs"), stop_at=stop_at
    )
    probes = [Probe((str(i),)).to_job(f"p{i}") for i in range(PROBES)]
    runner = tmp_path / "probe_runner.py"
    runner.write_bytes(asset("program/probe_runner.py"))
    ran = subprocess.run(
        [sys.executable, str(runner)],
        input=json.dumps({**job.__dict__, "probes": probes}),
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    calls = len(log.read_text().splitlines()) if log.exists() else 0
    return [_outcome(r) for r in json.loads(ran.stdout)["results"]], calls


@pytest.mark.parametrize("deadline", [True, False], ids=["deadline", "defence-off"])
def test_no_probe_starts_past_the_job_s_deadline(tmp_path: Path, deadline: bool) -> None:
    outcomes, calls = _run(tmp_path, time.time() + 2.5 if deadline else 0.0)
    started = [o for o in outcomes if not o.not_run]
    assert len(started) == calls  # a probe marked not run never reached the program
    assert all(o.stdout == f"done {i}\n" and o.writable for i, o in enumerate(started))
    if not deadline:
        assert calls == PROBES
        return
    assert 1 <= calls < PROBES  # eight seconds of probes, stopped after about two and a half
    left = outcomes[calls:]
    assert left and all(o.not_run and o.timed_out and not o.writable for o in left)
