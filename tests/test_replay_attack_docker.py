"""The no-logic attack on a real program task (issue 55), as a worker with only the cleanroom and
this project's public code would make it, graded by the real grader; each also against a build
with the defences off (the public seed, public probes kept, no no-logic dummies), to show that it
is the defences that stop it.

The attacker's table here is 1,000 public probes a seed (the benchmark, benchmarks/replay_attack.py,
runs 3,000 a seed); the suite is the example build's (200 probes, conftest.EXAMPLE_FLAGS).
"""

from __future__ import annotations

import io
import tarfile

import pytest
from click.testing import CliRunner
from test_solution_docker import assert_graded_whole_at_package_time

from taskfoundry.cli import main
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.task import TaskSpec, load_task
from taskfoundry.kinds.program.package import without_reference_failures
from taskfoundry.kinds.program.reference import REFERENCE_FAILS, grade_reference
from taskfoundry.kinds.program.replay_attack import attacker_table, attacks, grade
from taskfoundry.kinds.program.results import FilterStage
from taskfoundry.kinds.program.testgen.replay import ReplayTable
from taskfoundry.models import CoverageReport, TestsJson

from conftest import EXAMPLES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PER_SEED = 1000
# what a build with every defence off is: the public default seed, public probes kept as tests,
# and no replay, version or help dummy in the filter
UNDEFENDED = (
    "explorer: {seed: 0, public_probes: 0, replay_probes: 0, max_input_independent: 1, growth: 1.0}\n"
    "filter: {no_logic: []}\n"
)
# conftest.EXAMPLE_FLAGS' probe budget; no mutation stage: no test here reads its score (issue 57)
SMALL = ["--max-probes", "200", "--mutants", "0"]


@pytest.fixture(scope="module")
def defended(example_task, docker_client) -> tuple[TaskSpec, ReplayTable]:  # type: ignore[no-untyped-def]
    spec = load_task(example_task("csvq"))
    return spec, attacker_table(docker_client, spec.task.images.task_cleanroom, PER_SEED, (0, 1), "csvq")


@pytest.fixture(scope="module")
def undefended(  # type: ignore[no-untyped-def]
    defended, prefect_harness, base_image, docker_client, tmp_path_factory
) -> tuple[TaskSpec, ReplayTable]:
    out = tmp_path_factory.mktemp("undefended")
    config = out / "undefended.yaml"
    config.write_text(UNDEFENDED)
    args = ["build", str(EXAMPLES / "csvq"), "--out", str(out / "out"), *SMALL, "--config", str(config)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    (task_dir,) = (out / "out" / "tasks").iterdir()
    spec = load_task(task_dir)
    # the attacker sees the gold and its docs only, which the defences do not change: the same
    # reference makes the same table, so it is asked once (issue 57)
    shipped, table = defended
    if spec.task.reference_digest and spec.task.reference_digest == shipped.task.reference_digest:
        return spec, table
    return spec, attacker_table(docker_client, spec.task.images.task_cleanroom, PER_SEED, (0, 1), "csvq")


def _rate(spec: TaskSpec, program: bytes, client) -> float:  # type: ignore[no-untyped-def]
    passed, tests = grade(spec, program, client)
    assert tests > 0
    return passed / tests


def test_a_lookup_table_of_public_probes_passes_almost_nothing(defended, docker_client) -> None:  # type: ignore[no-untyped-def]
    spec, table = defended
    assert table.probes >= 1500  # the attacker's probes ran, and the gold answered
    found = attacks(table)
    assert _rate(spec, found["replay_exact"], docker_client) <= 0.05
    assert _rate(spec, found["replay_fallback"], docker_client) <= 0.15
    assert _rate(spec, found["replay_shape"], docker_client) <= 0.15  # argv without its files' names


def test_the_gold_s_version_and_help_for_every_call_pass_almost_nothing(defended, docker_client) -> None:  # type: ignore[no-untyped-def]
    spec, table = defended
    found = attacks(table)
    assert {"version", "help"} <= set(found)
    assert _rate(spec, found["version"], docker_client) <= 0.02
    assert _rate(spec, found["help"], docker_client) <= 0.02
    assert _rate(spec, found["nothing"], docker_client) == 0.0


def test_with_the_defences_off_the_same_table_passes_many_tests(undefended, docker_client) -> None:  # type: ignore[no-untyped-def]
    spec, table = undefended
    found = attacks(table)
    assert _rate(spec, found["replay_exact"], docker_client) > 0.05
    # built on the default acceptance gate: without the no-logic filter and the mutation stage
    # it is no benchmark task, and task.yaml says which bars it missed (issue 58)
    grade = spec.task.grade
    assert grade is not None and not grade.benchmark_grade
    assert "replay pass rate not measured (needs <= 10%)" in grade.reasons
    assert any(r.startswith("mutation score") for r in grade.reasons), grade.reasons


def test_the_build_records_its_no_logic_figures_and_hides_its_seed(example_task) -> None:  # type: ignore[no-untyped-def]
    import json

    import yaml

    task_dir = example_task("csvq")
    stats = yaml.safe_load((task_dir / "task.yaml").read_text())["stats"]
    report = json.loads((task_dir / "reports" / "replay.json").read_text())
    assert stats["replay_pass_rate"] == report["replay_pass_rate"] == 0.0
    assert set(report["pass_rate_before"]) >= {"replay", "version", "help"}
    assert report["public_probes"] > 0 and report["public_seeds"] == [0, 1]
    # the gate's bars this test build keeps (tests/example-build.yaml opens the others): met
    assert yaml.safe_load((task_dir / "task.yaml").read_text())["grade"] == {
        "benchmark_grade": True,
        "reasons": [],
    }
    assert_graded_whole_at_package_time(task_dir)


FAILS_ON_A_REBUILD = '''
from tfrun import run


def test_the_gold_s_build_path():
    """CATCHES: nothing a rebuild can match: it pins how the gold was built."""
    result = run(["--version"])
    assert result.stdout == "csvq, as built for the gold only\\n"
'''


def _with_extra_test(suite: bytes) -> bytes:
    """The branch tarball with one more test file, which no reference passes."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(suite)) as src, tarfile.open(fileobj=out, mode="w:gz") as dst:
        for member in src.getmembers():
            dst.addfile(member, src.extractfile(member) if member.isfile() else None)
        data = FAILS_ON_A_REBUILD.encode()
        info = tarfile.TarInfo("eval/tests/test_zz_build.py")
        info.size, info.mode = len(data), 0o644
        dst.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_a_test_the_reference_fails_is_dropped_before_packaging(example_task, docker_client) -> None:  # type: ignore[no-untyped-def]
    """The reference submission graded through the real grader: the test it fails goes, with
    reason reference_fails; every other kept test stays."""
    spec = load_task(example_task("csvq"))
    (key,) = spec.branches
    extra = "eval.tests.test_zz_build.test_the_gold_s_build_path"
    kept = [*spec.expected(key), extra]
    tests = TestsJson.model_validate({"branches": {key: {"tests": kept}}})
    suite = _with_extra_test(spec.suite(key).read_bytes())
    solution = (spec.task_dir / "solution.tar.gz").read_bytes()
    graded = grade_reference(spec.task, tests, {key: suite}, solution, EvalConfig(attempts=1), docker_client)
    assert graded.error is None and set(graded.failed) == {extra} and graded.passed == len(kept) - 1
    filt = FilterStage(kept=kept, dropped={}, dummy_pass_rate=0.0, coverage=CoverageReport.from_lines({}, {}))
    checked = without_reference_failures(filt, graded)
    assert checked.kept == spec.expected(key)
    assert [r.id for r in checked.dropped[extra]] == [REFERENCE_FAILS]
