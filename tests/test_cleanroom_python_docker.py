"""A source-visible (Python) task through the real source, build and cleanroom stages.

The project needs a Debian package at run time (python3-six, declared in taskfoundry.yaml),
so its cleanroom must start from the toolchain layer; its gold is a zipapp, so it must be
0755 and runnable by the worker; its test assets (one binary, one project format) must
land under /workspace/assets/ and the scan must stay clean. Planted leaks are still found.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from taskfoundry import sections
from taskfoundry.config import Config
from taskfoundry.kinds.program.cleanroom.image import WORKSPACE
from taskfoundry.kinds.program.cleanroom.leakscan import LeakReport, scan
from taskfoundry.kinds.program.cleanroom.stage import cleanroom_stage
from taskfoundry.kinds.program.results import CleanroomStage
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import DockerSandbox

from conftest import make_repo

pytestmark = pytest.mark.docker

CLI = (
    '"""greet: say hello to someone, politely."""\nimport argparse\n\nimport six\n\n\n'
    "def main():\n    parser = argparse.ArgumentParser(prog='greet', description='Greets NAME.')\n"
    "    parser.add_argument('name', nargs='?', default='world', help='who to greet')\n"
    "    args = parser.parse_args()\n    print(six.text_type('hello, ') + args.name)\n"
    "    return 0\n"
)
HIDDEN = (
    "import subprocess\n\n\ndef test_greets():\n    out = subprocess.run(['greet', 'Bo'], "
    "capture_output=True, text=True).stdout\n    assert out == 'hello, Bo\\n'\n"
)
BINARY = "GRT\x00\x01\x02" + "".join(chr(i) for i in range(32, 127)) * 2
FONT = "flf2a$ 6 5 16 15 2\nA tiny banner font for greet.\n" + "  $@\n  $@@\n" * 20
FILES = {
    "pyproject.toml": "[build-system]\nrequires = ['flit_core>=3.4,<4']\n"
    "build-backend = 'flit_core.buildapi'\n[project]\nname = 'greet'\nversion = '1.0'\n"
    "description = 'greets'\n[project.scripts]\ngreet = 'greet.cli:main'\n",
    "taskfoundry.yaml": "packages: [python3-six]\n",
    "README.md": "# greet\n\nSays hello: `greet NAME` prints `hello, NAME`.\n",
    # avfs's doc/api-overview: a doc quoting the source, outside any code fence
    "docs/internals.md": "# How greet works\n\nThe whole program:\n\n" + CLI,
    "greet/__init__.py": "",
    "greet/cli.py": CLI,
    "tests/test_cli.py": HIDDEN,
    "tests/data/sample.bin": BINARY,
    "tests/data/expected.out": "hello, Bo\n" * 8,
    "tests/data/names.csv": "name\nBo\nAnn\n",
    "examples/banner.flf": FONT,
}


@pytest.fixture(scope="module")
def task(
    docker_client: Any, base_image: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[SourceResult, BuildStage, CleanroomStage]:
    tmp = tmp_path_factory.mktemp("greet")
    repo = make_repo(tmp / "greet", FILES)
    config = Config(out=tmp / "out", namespace="taskfoundry-test")
    src = source_stage(str(repo), config.sources, config.work_dir)
    build = build_stage(src, sections.for_build(config), docker_client)
    return src, build, cleanroom_stage(src, build, sections.for_cleanroom(config), docker_client)


@pytest.fixture
def box(docker_client: Any, task: tuple[SourceResult, BuildStage, CleanroomStage]) -> Iterator[DockerSandbox]:
    with DockerSandbox(task[2].image, client=docker_client) as sandbox:
        yield sandbox


def test_cleanroom_runs_the_readable_gold_and_is_clean(
    task: tuple[SourceResult, BuildStage, CleanroomStage], box: DockerSandbox
) -> None:
    _, build, clean = task
    assert build.recipe.source_visible and build.runtime_image != build.base_image
    assert clean.leak.findings == [] and clean.leak.verdict == "clean", clean.leak.findings
    assert clean.leak.source_checked
    stat = box.exec(["stat", "-c", "%a %U", f"{WORKSPACE}/executable"], timeout=60)
    assert stat.stdout.decode().split() == ["755", "root"]
    run = box.exec(["./executable", "Ann"], timeout=60, workdir=WORKSPACE)  # the worker, no root
    assert (run.exit_code, run.stdout) == (0, b"hello, Ann\n"), run.text()
    assert "usage: greet" in clean.usage[""]


def test_a_doc_quoting_the_source_is_left_out_not_the_task(
    task: tuple[SourceResult, BuildStage, CleanroomStage], box: DockerSandbox
) -> None:
    """The leak scan found avfs's doc/api-overview and failed the task; the doc goes instead,
    named with the source it quotes, and the scan (clean, above) still checks every file."""
    left_out = task[2].docs_left_out
    assert list(left_out) == ["docs/internals.md"] and "greet/cli.py" in left_out["docs/internals.md"]
    listed = box.exec(["git", "ls-files"], timeout=60, workdir=WORKSPACE).stdout.decode().split()
    assert "README.md" in listed and "docs/internals.md" not in listed


def test_test_assets_are_copied_and_recorded(
    task: tuple[SourceResult, BuildStage, CleanroomStage], box: DockerSandbox
) -> None:
    assets = task[2].assets
    assert {(a.path, a.reason) for a in assets.kept} == {
        ("tests/data/sample.bin", "binary"),
        ("examples/banner.flf", "project_format"),
    }
    dropped = {a.path: a.reason for a in assets.dropped}
    assert dropped == {
        "tests/test_cli.py": "source",
        "tests/data/expected.out": "expected_output",
        "tests/data/names.csv": "common_text",
    }
    assert box.get_file(f"{WORKSPACE}/assets/tests/data/sample.bin") == BINARY.encode()
    assert box.get_file(f"{WORKSPACE}/assets/examples/banner.flf") == FONT.encode()
    listed = box.exec(["git", "ls-files"], timeout=60, workdir=WORKSPACE).stdout.decode().split()
    assert "assets/tests/data/sample.bin" in listed  # part of the one anonymous commit


def _scan(box: DockerSandbox, task: tuple[SourceResult, BuildStage, CleanroomStage]) -> LeakReport:
    src, build, clean = task
    return scan(
        box,
        clean.image,
        build.gold_sha256,
        source=src.path,
        gold_readable=True,
        allowed=clean.assets.allowed(WORKSPACE),
    )


def test_planted_leaks_are_still_found(
    task: tuple[SourceResult, BuildStage, CleanroomStage], box: DockerSandbox
) -> None:
    res = box.exec(
        "cp /workspace/executable /tmp/greet.pyz && chmod 644 /tmp/greet.pyz", timeout=60, user="0:0"
    )
    assert res.ok, res.text()
    box.put_file(HIDDEN.encode(), f"{WORKSPACE}/assets/tests/check.txt")
    box.put_file(CLI.encode(), f"{WORKSPACE}/assets/examples/banner.flf")  # allowed path, other bytes
    found = {(f.path, f.kind) for f in _scan(box, task).findings}
    assert {
        ("/tmp/greet.pyz", "binary_copy"),
        (f"{WORKSPACE}/assets/tests/check.txt", "hidden_test"),
        (f"{WORKSPACE}/assets/examples/banner.flf", "source_copy"),
    } <= found, found
    planted = {
        "/tmp/greet.pyz",
        f"{WORKSPACE}/assets/tests/check.txt",
        f"{WORKSPACE}/assets/examples/banner.flf",
        f"{WORKSPACE}/.git",
    }  # .git: the tree changed
    assert {path for path, _ in found} == planted, found


def test_a_script_gold_must_be_0755_and_nothing_else(
    task: tuple[SourceResult, BuildStage, CleanroomStage], box: DockerSandbox
) -> None:
    box.exec(["chmod", "0777", f"{WORKSPACE}/executable"], timeout=60, user="0:0")
    kinds = {f.kind for f in _scan(box, task).findings if f.path == f"{WORKSPACE}/executable"}
    assert kinds == {"executable_mode"}
    assert hashlib.sha256(box.get_file(f"{WORKSPACE}/executable")).hexdigest() == task[1].gold_sha256
