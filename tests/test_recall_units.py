"""Tests that recall a published algorithm's bytes stay out of what decides "resolved" unless the
config keeps them in: the real linter's triage on a written suite, the filter's pre-drops, the score."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfoundry.grading.models import EvaluationResult, TestResult
from taskfoundry.grading.summary import score_task
from taskfoundry.kinds.program.filter.stage import pre_dropped
from taskfoundry.kinds.program.lint import lint_stage
from taskfoundry.kinds.program.results import GenerateStage
from taskfoundry.kinds.program.settings import FilterConfig
from taskfoundry.kinds.program.testgen.stage import write_suite
from taskfoundry.models import CoverageReport

SUITE = '''"""Behavioral tests for `sumtool`."""

from tfrun import run


def test_digest_of_stdin_0001(tmp_path):
    result = run(["-"], stdin="abc", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\\n"
    assert result.stderr == ""


def test_usage_0002(tmp_path):
    result = run(["--bogus"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "sumtool: unknown option --bogus\\n"
'''
DIGEST = "eval.tests.test_main.test_digest_of_stdin_0001"
USAGE = "eval.tests.test_main.test_usage_0002"


def _gen(tmp_path: Path) -> GenerateStage:
    write_suite(tmp_path / "suite", {"test_main.py": SUITE})
    return GenerateStage(
        branch="b",
        suite=tmp_path / "suite",
        tests=[DIGEST, USAGE],
        generated=2,
        probes_run=2,
        exhausted=None,
        coverage=CoverageReport.from_lines({}, {"a.c": {1}}),
    )


def _resolved(kept: list[str]) -> bool:
    # a rebuild that is right in everything but the algorithm's exact bytes
    result = EvaluationResult(
        test_results=[
            TestResult(name=DIGEST, branch="b", status="failure"),
            TestResult(name=USAGE, branch="b", status="passed"),
        ]
    )
    return score_task("t", {"b": kept}, result, 0.95).resolved


@pytest.mark.parametrize("keep_in", [False, True], ids=["default", "kept in"])
def test_a_digest_pinned_by_a_test_decides_resolved_only_when_the_config_keeps_it_in(
    tmp_path: Path, keep_in: bool
) -> None:
    lint = lint_stage(_gen(tmp_path))
    assert list(lint.recall) == [DIGEST]
    (record,) = lint.recall[DIGEST]
    assert record.id == "recall" and "digest" in record.detail
    assert DIGEST not in lint.dropped  # the linter marks it; the filter decides
    out = pre_dropped(lint, FilterConfig(recall_in_resolve=keep_in))
    kept = [t for t in (DIGEST, USAGE) if t not in out]
    if keep_in:
        assert kept == [DIGEST, USAGE] and not _resolved(kept)
    else:
        assert kept == [USAGE] and out[DIGEST][0].id == "recall" and _resolved(kept)
