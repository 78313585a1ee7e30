"""The probe runner's spawns with `explorer.parallel` > 1: a coverage tool started in one
thread while another thread spawns a probe under the probe's file-size cap."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from taskfoundry.assets.program import probe_runner


@pytest.mark.parametrize("defence", [True, False])
def test_a_coverage_tool_does_not_inherit_a_probe_s_file_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, defence: bool
) -> None:
    held, done = threading.Event(), threading.Event()

    def probe_spawn() -> None:  # what run_probe does around its Popen, held a while
        with probe_runner.SPAWN, probe_runner.Limited(4096):
            held.set()
            done.wait(0.5)

    thread = threading.Thread(target=probe_spawn)
    thread.start()
    held.wait()
    if not defence:  # sh takes a lock nobody holds, as if it took none
        monkeypatch.setattr(probe_runner, "SPAWN", threading.Lock())
    res = probe_runner.sh(["sh", "-c", "head -c 100000 /dev/zero > big"], cwd=tmp_path)
    done.set()
    thread.join()
    size = (tmp_path / "big").stat().st_size
    if defence:
        assert res.returncode == 0 and size == 100000
    else:
        assert res.returncode != 0 and size == 4096, "the tool inherited the probe's cap"
