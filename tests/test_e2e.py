"""End to end: a real task from an example, through the real Prefect flow and real containers."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from taskfoundry.cli import main
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.filter.dummies import DUMMY_NAMES, render_dummy
from taskfoundry.kinds.program.filter.run import Grader
from taskfoundry.models import TestsJson, branch_key
from taskfoundry.pipeline.secret import seed_tag
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

from conftest import EXAMPLE_FLAGS, EXAMPLES

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="session")
def csvq_task(example_task) -> Path:  # type: ignore[no-untyped-def]
    return example_task("csvq")


def _suite(task_dir: Path, dest: Path) -> Path:
    (tarball,) = (task_dir / "tests").glob("*.tar.gz")
    with tarfile.open(tarball) as tar:
        tar.extractall(dest, filter="data")
    return dest


def test_task_directory_is_complete(csvq_task: Path) -> None:
    task = yaml.safe_load((csvq_task / "task.yaml").read_text())
    assert list(task)[:5] == ["repository", "commit", "language", "difficulty", "eval_clean_hashes"]
    assert task["language"] == "c" and task["images"]["task_cleanroom"].endswith(":task_cleanroom")
    tests = TestsJson.model_validate_json((csvq_task / "tests.json").read_text())
    (key,) = tests.branches
    # the branch is named by the build's secret seed, which only the hidden reports hold
    seed = json.loads((csvq_task / "reports" / "secret.json").read_text())["explorer_seed"]
    assert key == branch_key(f"explorer-{seed_tag(seed)}") != branch_key("explorer-seed0")
    assert str(seed) not in (csvq_task / "task.yaml").read_text()
    assert len(tests.branches[key].tests) >= 20
    assert (csvq_task / "build.sh").read_text().startswith("#!/bin/sh")
    for report in ("coverage.json", "leak.json", "filter.json", "lint.json"):
        assert (csvq_task / "reports" / report).exists()
    assert task["stats"]["line_rate"] > 0.5


def test_mutation_score_is_measured_and_shown(csvq_task: Path) -> None:
    from taskfoundry.kinds.program.mutate.models import MutationReport
    from taskfoundry.models import load_json_model

    report = load_json_model(csvq_task / "reports" / "mutation.json", MutationReport)
    assert report.mutants == 20 and report.skipped is None and report.unreliable_tests == []
    assert report.killed + report.survived > 0 and report.score is not None
    task = yaml.safe_load((csvq_task / "task.yaml").read_text())
    assert task["stats"]["mutation_score"] == report.score
    shown = CliRunner().invoke(main, ["show", str(csvq_task)]).output
    assert f"mutation score of kept tests: {report.score:.1%}" in shown
    listed = CliRunner().invoke(main, ["index", str(csvq_task.parent.parent)]).output
    assert f"mutation {report.score:.1%}" in listed


def test_tarball_layout_matches_programbench(csvq_task: Path, tmp_path: Path) -> None:
    suite = _suite(csvq_task, tmp_path)
    assert (suite / "eval" / "run.sh").exists()
    assert sorted(p.name for p in (suite / "eval" / "tests").glob("test_*.py"))


def test_cleanroom_image_is_clean(csvq_task: Path, docker_client) -> None:  # type: ignore[no-untyped-def]
    image = yaml.safe_load((csvq_task / "task.yaml").read_text())["images"]["task_cleanroom"]
    with DockerSandbox(image, SandboxLimits(), workdir="/workspace", client=docker_client) as box:
        mode = box.exec(["stat", "-c", "%a", "executable"], timeout=10).stdout.strip()
        assert mode == b"111"
        assert box.exec(["cat", "executable"], timeout=10).exit_code != 0
        assert box.exec(["./executable", "--version"], timeout=10).stdout.startswith(b"csvq")
        assert box.exec(["git", "rev-list", "--count", "HEAD"], timeout=10).stdout.strip() == b"1"
        found = box.exec(
            "find / -xdev \\( -name '*.c' -o -name '*.h' -o -name Makefile "
            "-o -name '*.o' -o -name '*.gcno' \\) 2>/dev/null | grep -v ^/usr",
            timeout=120,
        )
        assert found.stdout == b""
        assert b"Commands:" in box.get_file("/workspace/docs/usage/csvq.txt")


def test_kept_tests_pass_on_gold_and_fail_on_every_dummy(
    csvq_task: Path, tmp_path: Path, docker_client
) -> None:  # type: ignore[no-untyped-def]
    task = yaml.safe_load((csvq_task / "task.yaml").read_text())
    image = task["images"]["task_cleanroom"]
    kept = next(
        iter(TestsJson.model_validate_json((csvq_task / "tests.json").read_text()).branches.values())
    ).tests
    suite = _suite(csvq_task, tmp_path)
    grader = Grader.load(docker_client, image, suite, EvalConfig())
    gold = grader.run()
    assert [n for n in kept if gold[n].status != "passed"] == []
    usage = _usage(docker_client, image)
    for dummy in DUMMY_NAMES:
        results = grader.run(render_dummy(dummy, usage))
        assert [n for n in kept if results[n].status == "passed"] == [], dummy


def _usage(client, image: str) -> str:  # type: ignore[no-untyped-def]
    with DockerSandbox(image, SandboxLimits(), client=client) as box:
        return box.get_file("/workspace/docs/usage/csvq.txt").decode()


def test_second_build_reuses_images(csvq_task: Path, prefect_harness) -> None:  # type: ignore[no-untyped-def]
    out = csvq_task.parent.parent
    result = CliRunner().invoke(main, ["build", str(EXAMPLES / "csvq"), "--out", str(out), *EXAMPLE_FLAGS])
    assert result.exit_code == 0, result.output
    built = json.loads((csvq_task / "reports" / "images.json").read_text())
    assert built["task_built"] is False and built["cleanroom_built"] is False


def test_the_examples_own_tests_are_harvested_replayed_and_kept(csvq_task: Path) -> None:
    """csvq's `make check` (tests/run.sh) ran with the recording shim: its calls of csvq came
    back as probes, and some became hidden tests; every origin is counted in generate.json."""
    report = json.loads((csvq_task / "reports" / "generate.json").read_text())
    harvest = report["harvest"]
    assert harvest["status"] == "harvested" and harvest["command"] == "make -k check", harvest
    assert harvest["exit_code"] == 0  # the project's suite passed through the shim
    assert harvest["calls"] >= 20 and harvest["probes"] >= 20
    origins = report["origins"]
    assert origins["harvested"]["probes"] == harvest["probes"]
    assert origins["harvested"]["tests_kept"] >= 1
    assert {"usage", "harvested"} <= set(origins)
    kept = json.loads((csvq_task / "reports" / "filter.json").read_text())["kept"]
    assert sum(row["tests_kept"] for row in origins.values()) == len(kept)
    mutation = json.loads((csvq_task / "reports" / "mutation.json").read_text())
    killed = sum(r["status"] == "killed" for r in mutation["records"])
    assert sum(row["kills"] for row in origins.values()) == killed


# a program keeping a cache at a fixed name in the temporary directory, made by its first call
# (ansible-lint's /tmp/.ansible-0aaa): a call of another uid cannot write in it
CACHING = """#!/bin/sh
dir="${TMPDIR:-/tmp}/.cache-0aaa"
mkdir -p "$dir" 2>/dev/null
if ! : > "$dir/.lock" 2>/dev/null; then echo "Permission denied: $dir/.lock" >&2; exit 1; fi
echo "linted $1"
"""


@pytest.mark.parametrize("own", [True, False], ids=["own-tmpdir", "defence-off"])
def test_each_call_has_a_temporary_directory_of_its_own(
    csvq_task: Path, tmp_path: Path, docker_client, own: bool
) -> None:  # type: ignore[no-untyped-def]
    """The grader runs each pytest worker's calls as a uid of its own: with /tmp shared, the gold
    of ansible-lint failed every call on the worker whose uid did not make its cache first (53
    of 96 passed). Each call's TMPDIR is its own (tfrun.own_tmp), so the gold passes all."""
    from taskfoundry.assets import asset
    from taskfoundry.kinds.program.testgen.stage import write_suite

    test = (
        "from tfrun import run\n\n\ndef test_{0}(tmp_path):\n"
        '    r = run(["{0}"]{1})\n    assert (r.returncode, r.stdout) == (0, "linted {0}\\n"), r.stderr\n'
    )
    suite = tmp_path / "suite"
    # as the explorer writes them (cwd=tmp_path), and as a hand-written test may (the workspace:
    # read-only, so no room beside it)
    where = {name: ", cwd=tmp_path" if name < "e" else "" for name in "abcdefgh"}
    write_suite(suite, {f"test_{name}.py": test.format(name, where[name]) for name in "abcdefgh"})
    if not own:  # tfrun as it was: the program's TMPDIR unset, /tmp shared by every uid
        code = asset("grading/tfrun.py").decode()
        assert '        "TMPDIR": str(tmp),\n' in code
        (suite / "eval" / "tests" / "tfrun.py").write_text(code.replace('        "TMPDIR": str(tmp),\n', ""))
    image = yaml.safe_load((csvq_task / "task.yaml").read_text())["images"]["task_cleanroom"]
    grader = Grader.load(docker_client, image, suite, EvalConfig())
    assert grader.harness.pytest_workers == 2 and grader.harness.program_uid  # two uids
    results = grader.run(CACHING.encode())
    failed = sorted(n for n, o in results.items() if o.status != "passed")
    assert len(results) == 8
    if own:
        assert failed == [], [results[n].message for n in failed][:2]
    else:
        assert failed and len(failed) < 8  # the calls of the uid that did not make the cache
        assert all("Permission denied" in results[n].message for n in failed)
