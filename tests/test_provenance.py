"""A re-run from the cache keeps the task's provenance (issue 59): its created time, which
`--as-of` and releases cut on, and the stage times of the run that made each result."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml

from taskfoundry.pipeline.provenance import StageTimes, provenance

MADE = datetime(2026, 3, 4, 5, 6, tzinfo=UTC)
EARLIER = {"build": 91.5, "generate": 40.25, "filter": 12.0, "source": 0.4}


def _earlier(task_dir: Path, commit: str = "abc") -> None:
    task_dir.mkdir(parents=True)
    doc = {"created_at": MADE.isoformat(), "commit": commit, "stats": {"stage_seconds": EARLIER}}
    (task_dir / "task.yaml").write_text(yaml.safe_dump(doc))


def test_a_rerun_that_reused_every_stage_keeps_the_earlier_task_s_time_and_stage_times(
    tmp_path: Path,
) -> None:
    _earlier(tmp_path / "t")
    hits = StageTimes(
        seconds={"source": 0.3, "build": 0.05, "generate": 0.04, "filter": 0.02},
        reused=("build", "generate", "filter"),
    )
    made = provenance(tmp_path / "t", "abc", hits)
    assert made.created_at == MADE
    assert made.stage_seconds == EARLIER  # not the cache lookups' 0.05 s
    assert made.reused_stages == ["build", "filter", "generate"]


def test_a_rerun_that_made_a_stage_again_is_a_new_task_that_keeps_the_reused_stages_times(
    tmp_path: Path,
) -> None:
    _earlier(tmp_path / "t")
    times = StageTimes(
        seconds={"source": 0.3, "build": 0.05, "generate": 33.0, "filter": 11.0},
        reused=("build",),
        remade=("generate", "filter"),
    )
    made = provenance(tmp_path / "t", "abc", times)
    assert made.created_at > MADE
    assert made.stage_seconds == {"source": 0.3, "build": 91.5, "generate": 33.0, "filter": 11.0}
    assert made.reused_stages == ["build"]


def test_a_first_build_or_another_commit_is_created_now_without_cache_lookup_times(tmp_path: Path) -> None:
    times = StageTimes(
        seconds={"source": 0.3, "build": 0.05, "generate": 30.0}, reused=("build",), remade=("generate",)
    )
    first = provenance(tmp_path / "none", "abc", times)
    _earlier(tmp_path / "other", commit="def")
    other = provenance(tmp_path / "other", "abc", times)
    for made in (first, other):
        assert made.created_at > MADE
        assert made.stage_seconds == {"source": 0.3, "generate": 30.0}  # build's 0.05 s was a lookup
        assert made.reused_stages == ["build"]


def test_an_unreadable_earlier_task_yaml_counts_as_none(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.yaml").write_text("created_at: [not a time\n")
    made = provenance(tmp_path / "t", "abc", StageTimes(seconds={"source": 1.0}))
    assert made.created_at > MADE and made.stage_seconds == {"source": 1.0}
