"""The probe runner's limits, as a program meets them in a container: the timeout (a pidfd
wakes the runner at the program's exit), the file-size cap it inherits (the runner's soft
limit while it starts the program, so Python vforks), and stdin both ways (written at once
when it fits the pipe, else through communicate)."""

from __future__ import annotations

import time

import pytest

from taskfoundry.kinds.program.testgen.probes import Probe, RunnerJob, install_runner, run_probes
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker

PROGRAM = b"""#!/bin/sh
case "$1" in
  sleep) sleep 30 ;;
  flood) head -c 5000000 /dev/zero > out.bin; echo "rc=$? size=$(stat -c %s out.bin)" ;;
  cat) cat ;;
  ignore) exit 3 ;;
  size) wc -c < big ;;
esac
"""
CAP = 100_000  # the runner caps files at four times the output cap


def test_timeouts_file_caps_and_stdin_hold(base_image: str, docker_client) -> None:  # type: ignore[no-untyped-def]
    small, large = "line\n" * 100, "x" * 200_000 + "\n"
    probes = [
        Probe(("sleep",)),
        Probe(("flood",)),
        Probe(("cat",), stdin=small),
        Probe(("cat",), stdin=large),
        Probe(("ignore",), stdin=large),
        Probe(("ignore",), stdin=small),
        Probe(("size",), files=(("big", "y" * (CAP * 8)),)),  # the runner writes it uncapped
    ]
    with DockerSandbox(base_image, SandboxLimits(), client=docker_client) as box:
        install_runner(box)
        box.put_file(PROGRAM, "/tmp/prog", mode=0o755)
        job = RunnerJob(executable="/tmp/prog", argv0="/tmp/prog", timeout=0.5, output_cap=CAP)
        start = time.monotonic()
        sleep, flood, cat_small, cat_large, ignore_large, ignore_small, size = run_probes(box, job, probes)
        took = time.monotonic() - start
    assert sleep.timed_out and took < 10  # not the sleep's 30 s
    assert flood.stdout == f"rc=153 size={CAP * 4}\n"  # SIGXFSZ (128 + 25) at the cap
    assert cat_small.stdout == small and cat_large.stdout is not None
    assert cat_large.truncated and not cat_large.timed_out  # 200 kB out: over the output cap
    assert ignore_large.exit_code == ignore_small.exit_code == 3
    assert not ignore_large.timed_out and not ignore_small.timed_out
    assert size.stdout == f"{CAP * 8}\n"
