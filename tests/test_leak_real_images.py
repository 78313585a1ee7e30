"""The real cleanroom images on this engine scan clean against their sources.

A finding here is a false positive (a defect of the scan) or a real leak of the builder;
either way it fails. Images are what the session's example builds (conftest's example_task) left:
`<ns>/<owner>_1776_<name>.<sha7>:task_cleanroom` or `<ns>/cleanroom-<owner>_1776_<name>:<hash>`.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from taskfoundry.kinds.program.cleanroom.assets import select_assets
from taskfoundry.kinds.program.cleanroom.image import WORKSPACE
from taskfoundry.kinds.program.cleanroom.leakscan import scan
from taskfoundry.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_TAG = re.compile(r"(?:cleanroom-)?[\w.-]+_1776_(?P<name>[\w-]+?)(?:\.[0-9a-f]{7})?:(?P<tag>\S+)$")


def cleanroom_image(client, name: str) -> str | None:  # type: ignore[no-untyped-def]
    """The newest cleanroom image of examples/<name>, preferring the task_cleanroom alias."""
    found: list[tuple[bool, float, str]] = []
    for image in client.images.list():
        for tag in image.tags:
            match = _TAG.search(tag)
            if not match or match["name"] != name:
                continue
            if match["tag"] == "task_cleanroom" or "/cleanroom-" in tag:
                created = image.attrs.get("Created", "")
                found.append((match["tag"] == "task_cleanroom", created, tag))
    return max(found)[2] if found else None


def test_real_cleanroom_is_clean_and_has_usage_text(example_task, docker_client) -> None:  # type: ignore[no-untyped-def]
    example_task("csvq")
    assert_clean_with_usage_text(docker_client, "csvq")


def assert_clean_with_usage_text(client, name: str) -> None:  # type: ignore[no-untyped-def]
    """examples/<name>'s cleanroom image (its build has run) scans clean and holds its --help text.
    logsum's and rcalc's cases are in test_solution_go_rust_docker.py, whose worker builds them."""
    image = cleanroom_image(client, name)
    assert image is not None, f"no cleanroom image of examples/{name} after its build"
    with DockerSandbox(image, client=client) as box:
        gold = hashlib.sha256(box.get_file("/workspace/executable")).hexdigest()
        usage = box.exec("ls /workspace/docs/usage/*.txt && cat /workspace/docs/usage/*.txt", timeout=60)
        # as the cleanroom stage does: the test assets it copied are there on purpose (the
        # examples install no runtime data)
        kept, _ = select_assets(EXAMPLES / name)
        report = scan(box, image, gold, source=EXAMPLES / name, allowed=kept.allowed(WORKSPACE))
    assert usage.ok and b"/workspace/docs/usage/" in usage.stdout, usage.text()
    assert len(usage.stdout) > 200  # real --help text, not empty files
    assert report.findings == [], [f.model_dump() for f in report.findings]
    assert report.verdict == "clean" and report.source_checked
