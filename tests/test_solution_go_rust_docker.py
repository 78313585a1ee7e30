"""The reference submission of the Go and Rust examples scores 1.0, a do-nothing one 0.0. A module
of its own (its own xdist group, tests/conftest.py): these two example builds run on one worker
while the other builds csvq for test_solution_docker.py and its neighbours."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from test_leak_real_images import assert_clean_with_usage_text
from test_solution_docker import rate, reference_scores_one

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.mark.parametrize("name", ["logsum", "rcalc"])
def test_reference_solution_scores_one(example_task, docker_client, name: str) -> None:  # type: ignore[no-untyped-def]
    reference_scores_one(example_task(name), docker_client, regrade=False)  # graded at package time


def test_do_nothing_submission_scores_zero(example_task, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "submission.tar.gz"
    script = b"#!/bin/sh\nprintf '#!/bin/sh\\nexit 0\\n' > executable && chmod +x executable\n"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("compile.sh")
        info.size, info.mode = len(script), 0o755
        tar.addfile(info, io.BytesIO(script))
    assert rate(example_task("rcalc"), path, docker_client) == (0.0, None)


@pytest.mark.parametrize("name", ["logsum", "rcalc"])
def test_real_cleanroom_is_clean_and_has_usage_text(example_task, docker_client, name: str) -> None:  # type: ignore[no-untyped-def]
    example_task(name)
    assert_clean_with_usage_text(docker_client, name)
