"""An infrastructure failure in the filter marks the branch, never a test (one test per failure mode)."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfoundry.kinds.program.cleanroom.leakscan import LeakReport
from taskfoundry.kinds.program.filter.stage import filter_stage
from taskfoundry.kinds.program.results import CleanroomStage, GenerateStage, LintStage
from taskfoundry.kinds.program.settings import FilterSettings
from taskfoundry.kinds.program.testgen.stage import write_suite
from taskfoundry.models import CoverageReport

pytestmark = pytest.mark.docker


def _stages(tmp_path: Path, image: str) -> tuple[GenerateStage, LintStage, CleanroomStage]:
    write_suite(tmp_path / "suite", {"test_a.py": "def test_x():\n    assert 1 == 1\n"})
    gen = GenerateStage(
        branch="b",
        suite=tmp_path / "suite",
        tests=["eval.tests.test_a.test_x"],
        generated=1,
        probes_run=1,
        exhausted=None,
        coverage=CoverageReport.from_lines({}, {"a.c": {1}}),
    )
    lint = LintStage(dropped={}, findings=0, high=0, report={})
    leak = LeakReport(image=image, verdict="clean", findings=[])
    return gen, lint, CleanroomStage(image=image, built=False, usage={"": "usage\n"}, leak=leak)


def test_missing_cleanroom_image_marks_the_branch(tmp_path: Path, docker_client) -> None:  # type: ignore[no-untyped-def]
    gen, lint, clean = _stages(tmp_path, "taskfoundry-test/no-such-image:gone")
    result = filter_stage(gen, lint, clean, FilterSettings(), docker_client)
    assert result.kept == [] and result.dropped == {}
    assert result.branch_error and "no-such-image" in result.branch_error
