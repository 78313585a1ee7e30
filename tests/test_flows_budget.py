"""Batches: one row per source, failures as rows, and a failure budget that ends a run early."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry.cli import main
from taskfoundry.errors import StageError
from taskfoundry.flows.summary import RunRow, RunSummary, failure_limit, over_budget


@pytest.mark.parametrize(
    ("budget", "total", "limit"),
    [(None, 10, float("inf")), (0.2, 10, 2.0), (0.0, 5, 0.0), (3, 10, 3), (1, 2, 1)],
)
def test_failure_limit_is_a_fraction_below_one_else_a_count(
    budget: float | None, total: int, limit: float
) -> None:
    assert failure_limit(budget, total) == limit


def test_over_budget_means_more_failures_than_allowed() -> None:
    assert not over_budget(2, 0.2, 10) and over_budget(3, 0.2, 10)
    assert over_budget(1, 0.0, 4) and not over_budget(0, 0.0, 4)


def test_failed_row_keeps_stage_message_and_log(tmp_path: Path) -> None:
    row = RunRow.failure("src", StageError("build", "no compiler", tmp_path / "build.log"), 1.234)
    assert (row.status, row.stage, row.error, row.log, row.seconds) == (
        "failed",
        "build",
        "no compiler",
        tmp_path / "build.log",
        1.23,
    )
    other = RunRow.failure("src", KeyError("x"), 0)
    assert other.stage is None and other.error == "KeyError: 'x'"


def test_summary_ok_only_without_failures() -> None:
    rows = [RunRow(source="a", status="built"), RunRow(source="b", status="skipped")]
    assert RunSummary(flow="f", rows=rows).ok
    assert not RunSummary(flow="f", rows=[*rows, RunRow(source="c", status="failed")]).ok


def _not_repos(tmp_path: Path, n: int) -> list[str]:
    paths = [tmp_path / f"plain{i}" for i in range(n)]
    for path in paths:
        path.mkdir()
    return [str(p) for p in paths]


def test_failures_within_budget_are_rows_and_the_run_goes_on(tmp_path: Path, prefect_harness: None) -> None:
    sources = _not_repos(tmp_path, 2)
    listing = tmp_path / "sources.txt"
    listing.write_text("# two sources that are no repositories\nplain0\nplain1  # the second\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build-many", str(listing), "--out", str(out), "--no-progress"])
    assert result.exit_code == 1, result.output
    failed = [line for line in result.output.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 2 and all("source stage failed: " in line for line in failed)
    (run_file,) = (out / "runs").glob("build-many-*.json")
    summary = RunSummary.model_validate_json(run_file.read_text())
    assert [r.source for r in summary.rows] == sources and not summary.budget_exceeded
    assert {r.status for r in summary.rows} == {"failed"}


def test_past_the_budget_the_run_ends_early(tmp_path: Path, prefect_harness: None) -> None:
    sources = _not_repos(tmp_path, 4)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "build-many",
            *sources,
            "--out",
            str(out),
            "--no-progress",
            "--concurrency",
            "1",
            "--max-failures",
            "1",
        ],
    )
    assert result.exit_code == 1
    assert "failure budget exceeded" in result.output
    (run_file,) = (out / "runs").glob("build-many-*.json")
    data = json.loads(run_file.read_text())
    statuses = [r["status"] for r in data["rows"]]
    # the third may have started before the second's failure was counted; the fourth had not
    assert data["budget_exceeded"] is True and statuses[:2] == ["failed", "failed"]
    assert statuses[3] == "cancelled" and "cancelled" in result.output


def test_a_dask_address_without_prefect_dask_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from taskfoundry.config import Config
    from taskfoundry.errors import ConfigError
    from taskfoundry.flows.many import batch_runner

    monkeypatch.setitem(sys.modules, "prefect_dask", None)  # as if not installed (the `dask` extra)
    config = Config.model_validate({"orchestration": {"dask_address": "tcp://127.0.0.1:8786"}})
    with pytest.raises(ConfigError, match="prefect-dask"):
        batch_runner(config)
    assert batch_runner(Config())._max_workers == 2  # type: ignore[attr-defined]


def test_a_refresh_with_no_candidates_is_an_empty_run(tmp_path: Path, prefect_harness: None) -> None:
    # nothing listed, so refresh discovers: asking no registry keeps the test off the internet
    config = tmp_path / "config.yaml"
    config.write_text("discover:\n  registries: []\n")
    args = ["refresh", "--out", str(tmp_path / "out"), "--config", str(config), "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "0 built, 0 skipped, 0 failed, 0 cancelled" in result.output
