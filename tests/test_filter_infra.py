"""An infrastructure failure in the filter marks the branch, never a test (one test per failure mode)."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskfoundry.errors import FilterError
from taskfoundry.images.layer import load_layer_image
from taskfoundry.kinds.program.cleanroom.leakscan import LeakReport
from taskfoundry.kinds.program.filter.stage import filter_stage
from taskfoundry.kinds.program.results import CleanroomStage, GenerateStage, LintStage
from taskfoundry.kinds.program.settings import FilterSettings
from taskfoundry.kinds.program.testgen.stage import write_suite
from taskfoundry.models import CoverageReport
from taskfoundry.sandbox.tarutil import tar_files

pytestmark = pytest.mark.docker


def _stages(
    tmp_path: Path, image: str, body: str = "assert 1 == 1"
) -> tuple[GenerateStage, LintStage, CleanroomStage]:
    write_suite(tmp_path / "suite", {"test_a.py": f"def test_x():\n    {body}\n"})
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


def test_a_suite_the_filter_empties_is_no_task(tmp_path: Path, docker_client, base_image: str) -> None:  # type: ignore[no-untyped-def]
    """kas 5.5 was packaged with 0 tests: each failed on gold. Now the stage says so and stops."""
    layer = tar_files({"workspace/executable": b"#!/bin/sh\necho gold\n"}, mode=0o755)
    image, _ = load_layer_image(
        docker_client, base_image, layer, "taskfoundry-test/gold-echo:1", config={}, comment="a gold"
    )
    gen, lint, clean = _stages(tmp_path, image, body="assert 'gold' == 'coverage build'")
    empty = r"no test passed the filter \(gold_fail 1\); first: .*coverage build"
    with pytest.raises(FilterError, match=empty):
        filter_stage(gen, lint, clean, FilterSettings(), docker_client)
