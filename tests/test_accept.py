"""The acceptance gate (issue 58): a program task's figures against `accept:`, written at package
time as task.yaml's `grade`; a task below it is listed, released and shown as such, and left out
of `tasks` and releases unless asked for."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry import sections
from taskfoundry.catalog import Catalog, ReleaseError
from taskfoundry.catalog.release import make_release
from taskfoundry.cli import main
from taskfoundry.config import Config
from taskfoundry.kinds.program.accept import judge
from taskfoundry.kinds.program.filter.dummies import DUMMY_NAMES
from taskfoundry.kinds.program.settings import AcceptConfig
from taskfoundry.models import TaskStats

from catalog_support import write_task

GOOD = TaskStats(tests_kept=357, line_rate=0.945, mutation_score=0.81, replay_pass_rate=0.0)
# avfs as the yield table accepted it: 71 tests that run 0.02% of the program
THIN = TaskStats(tests_kept=71, line_rate=0.0002, mutation_score=None, replay_pass_rate=0.19)
DUMMIES = list(DUMMY_NAMES)


def test_a_task_that_covers_its_program_is_benchmark_grade() -> None:
    grade = judge(GOOD, True, DUMMIES, AcceptConfig())
    assert grade.benchmark_grade and grade.reasons == []


def test_a_thin_suite_is_below_the_gate_and_each_missed_bar_says_its_figure() -> None:
    grade = judge(THIN, True, DUMMIES, AcceptConfig())
    assert not grade.benchmark_grade
    assert grade.reasons == [
        "line coverage 0.02% < 60%",
        "mutation score not measured (needs >= 60%)",
        "replay pass rate 19.0% > 10%",
    ]
    few = judge(GOOD.model_copy(update={"tests_kept": 12}), True, DUMMIES, AcceptConfig())
    assert few.reasons == ["kept tests 12 < 50"]


def test_no_reference_grade_or_a_dummy_left_out_misses_the_gate() -> None:
    grade = judge(GOOD, False, [d for d in DUMMIES if d != "silent"], AcceptConfig())
    assert grade.reasons == [
        "reference not graded (filter.grade_reference is off)",
        "dummies not run by the filter: silent",
    ]


def test_a_bar_set_to_null_is_not_required() -> None:
    open_gate = AcceptConfig(min_line_rate=None, min_mutation_score=None, max_replay_pass_rate=None)
    assert judge(THIN, True, DUMMIES, open_gate).benchmark_grade
    strict = AcceptConfig(min_line_rate=0.95)
    assert judge(GOOD, True, DUMMIES, strict).reasons == ["line coverage 94.5% < 95%"]


def test_the_gate_is_read_from_the_config_file_and_reaches_the_package_stage(tmp_path: Path) -> None:
    config = Config.model_validate(
        {"out": tmp_path, "accept": {"min_tests": 200}, "filter": {"dummies": ["cat"]}}
    )
    settings = sections.for_program_package(config)
    assert settings.accept.min_tests == 200 and settings.accept.min_line_rate == 0.60
    assert settings.dummies == ["cat"]
    with pytest.raises(ValueError, match="min_line_rate"):
        Config.model_validate({"out": tmp_path, "accept": {"min_line_rate": 1.5}})
    with pytest.raises(ValueError, match="min_covrage"):
        Config.model_validate({"out": tmp_path, "accept": {"min_covrage": 0.5}})


def _graded_out(out: Path) -> Path:
    """Three program tasks: one benchmark-grade, one below the gate, one built before it."""
    tasks = out / "tasks"
    good = judge(GOOD, True, DUMMIES, AcceptConfig()).model_dump()
    thin = judge(THIN, True, DUMMIES, AcceptConfig()).model_dump()
    write_task(tasks, "acme__good.aaaaaaa", extra={"grade": good}, line_rate=0.945)
    write_task(tasks, "acme__thin.bbbbbbb", extra={"grade": thin}, line_rate=0.0002)
    write_task(tasks, "acme__old.ccccccc")
    return out


def test_tasks_leaves_out_a_task_below_the_gate_and_says_so(tmp_path: Path) -> None:
    out = _graded_out(tmp_path / "out")
    shown = CliRunner().invoke(main, ["tasks", str(out), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    assert "acme__thin.bbbbbbb" not in shown.stdout and "acme__good.aaaaaaa" in shown.stdout
    assert "acme__old.ccccccc" in shown.stdout  # built before the gate: not judged, listed
    assert (
        "left out" in shown.stderr and "below the acceptance gate (line coverage 0.02% < 60%" in shown.stderr
    )
    every = CliRunner().invoke(main, ["tasks", str(out), "--below-gate"])
    assert every.exit_code == 0 and "3 tasks" in every.stdout
    rows = {line.split()[1]: line for line in every.stdout.splitlines() if "acme__" in line}
    assert "below gate" in rows["acme__thin.bbbbbbb"] and "benchmark" in rows["acme__good.aaaaaaa"]
    assert "n/a" in rows["acme__old.ccccccc"]
    record = Catalog.load(out).get("acme__thin.bbbbbbb")
    assert record.below_gate and record.grade_reasons[0] == "line coverage 0.02% < 60%"


def test_a_release_leaves_out_a_task_below_the_gate_unless_asked(tmp_path: Path) -> None:
    out = _graded_out(tmp_path / "out")
    as_of = datetime(2026, 1, 1, tzinfo=UTC)
    info = make_release(out, tmp_path / "r1", "v1", as_of, images=False)
    assert info.tasks == ["acme__good.aaaaaaa", "acme__old.ccccccc"]
    assert [e.message.split(" (")[0] for e in info.left_out] == ["below the acceptance gate"]
    every = make_release(out, tmp_path / "r2", "v2", as_of, images=False, below_gate=True)
    assert every.tasks == ["acme__good.aaaaaaa", "acme__old.ccccccc", "acme__thin.bbbbbbb"]
    only_thin = tmp_path / "thin"
    write_task(only_thin / "tasks", "acme__thin.bbbbbbb", extra={"grade": {"benchmark_grade": False}})
    with pytest.raises(ReleaseError, match="1 below the acceptance gate: --below-gate"):
        make_release(only_thin, tmp_path / "r3", "v3", as_of, images=False)
    made = CliRunner().invoke(
        main, ["release", str(out), "--as-of", "2026-01-01", "--name", "v4", "--no-images"]
    )
    assert made.exit_code == 0 and "2 tasks" in made.stdout and "below the acceptance gate" in made.stderr


def test_show_says_the_grade_first(tmp_path: Path) -> None:
    out = _graded_out(tmp_path / "out")
    thin = CliRunner().invoke(main, ["show", str(out / "tasks" / "acme__thin.bbbbbbb"), "--markdown"])
    good = CliRunner().invoke(main, ["show", str(out / "tasks" / "acme__good.aaaaaaa"), "--markdown"])
    assert thin.exit_code == 0 and good.exit_code == 0, thin.output + good.output
    assert thin.stdout.splitlines()[2].startswith(
        "- grade: **below the acceptance gate**: line coverage 0.02%"
    )
    assert "- grade: **benchmark-grade**" in good.stdout
    old = CliRunner().invoke(main, ["show", str(out / "tasks" / "acme__old.ccccccc"), "--markdown"])
    assert "- grade:" not in old.stdout


def test_a_batch_counts_its_benchmark_grade_tasks_apart(tmp_path: Path) -> None:
    from taskfoundry.flows.many import built_row
    from taskfoundry.flows.report import run_markdown
    from taskfoundry.flows.summary import RunSummary

    tasks = _graded_out(tmp_path / "out") / "tasks"
    rows = [built_row(f"src{i}", [d], 1.0) for i, d in enumerate(sorted(tasks.iterdir()))]
    assert [r.below_gate for r in rows] == [0, 0, 1]  # good, old (not gated), thin
    summary = RunSummary(flow="refresh", rows=rows)
    assert "cancelled: 0; 2 benchmark-grade tasks, 1 below the acceptance gate" in run_markdown(summary)
    assert RunSummary(flow="refresh", rows=rows[:2]).gate_text() == ""


def test_an_export_for_a_harness_leaves_out_a_task_below_the_gate_unless_asked(tmp_path: Path) -> None:
    out = _graded_out(tmp_path / "out")
    cut = CliRunner().invoke(main, ["export", str(out), str(tmp_path / "pb"), "--format", "programbench"])
    assert cut.exit_code == 0, cut.output
    assert sorted(p.name for p in (tmp_path / "pb").iterdir()) == ["acme__good.aaaaaaa", "acme__old.ccccccc"]
    assert "left out" in cut.stderr and "acme__thin.bbbbbbb: below the acceptance gate" in cut.stderr
    every = ["export", str(out), str(tmp_path / "all"), "--format", "programbench", "--below-gate"]
    assert CliRunner().invoke(main, every).exit_code == 0
    assert len(list((tmp_path / "all").iterdir())) == 3
