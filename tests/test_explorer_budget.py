"""The explorer's time budget: what it keeps back for the gold's check of the kept tests."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen.explorer import CALL_FLOOR, Explorer, Kept
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob


def _explorer(call_seconds: float, kept: int, runs: int, parallel: int = 2) -> Explorer:
    explorer = Explorer(ExplorerConfig(max_seconds=900), RunnerJob("/p", parallel=parallel), "/gold")
    for i in range(kept):
        out = Outcome(0, f"out {i}\n", "", False, False, {}, seconds=call_seconds)
        explorer.state.kept.append(Kept(Probe((str(i),)), out, f"f{i}", {}, 1))
    explorer.state.probes_run = runs
    return explorer


def _old_estimate(explorer: Explorer, elapsed: float) -> float:
    """The rule before: a probe's whole share of the time so far, its coverage read-out too."""
    return 2 * len(explorer.state.kept) * elapsed / explorer.state.probes_run


@pytest.mark.parametrize("rule", ["call-times", "defence-off"])
def test_a_slow_coverage_read_out_does_not_end_exploring(rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """appstream-generator: 120 probes in 600 s (gcov took 5 s a probe after a 0.3 s call), 40
    kept. The gold's check takes 2 × 40 × 0.3 s over two at a time: exploring goes on. Before,
    the check was counted at 2 × 40 × 5 s and exploring stopped with 300 s of 900 left."""
    explorer = _explorer(call_seconds=0.3, kept=40, runs=120)
    if rule == "defence-off":
        monkeypatch.setattr(Explorer, "_verify_seconds", lambda self: _old_estimate(self, 600))
    start = time.monotonic() - 600
    assert explorer._budget_spent(start) is (rule == "defence-off")
    if rule == "call-times":
        assert explorer._verify_seconds() == pytest.approx(2 * 40 * 0.3 / 2)


def test_slow_calls_still_end_exploring_in_time() -> None:
    """ufomerge's calls took 3 s under coverage: 100 kept, one at a time, is 600 s of check,
    which 400 s of exploring leaves no room for."""
    explorer = _explorer(call_seconds=3.0, kept=100, runs=130, parallel=1)
    assert explorer._verify_seconds() == pytest.approx(600)
    assert explorer._budget_spent(time.monotonic() - 400) and explorer.state.exhausted == "time"
    quick = _explorer(call_seconds=0.0, kept=10, runs=20, parallel=1)
    assert quick._verify_seconds() == pytest.approx(2 * 10 * CALL_FLOOR)


def test_drawing_inputs_leaves_no_hypothesis_folder_where_the_build_was_started(tmp_path: Path) -> None:
    """A build drew its inputs with hypothesis, which kept its caches in `./.hypothesis/` (issue 59)."""
    code = (
        "from hypothesis import strategies as st\n"
        "from taskfoundry.kinds.program.testgen.strategies import draw\n"
        "assert len(draw(st.text(), 5, 1)) == 5\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, timeout=120)
    assert list(tmp_path.iterdir()) == []
