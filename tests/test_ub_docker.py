"""Undefined behaviour named as the cause of a test the reference fails (issue 55): a real C
program with a signed overflow on one call, built by the real build stage, its coverage build
rebuilt with UBSan, and the failing tests run alone against it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from taskfoundry.builders.build import run_build
from taskfoundry.builders.resolve import resolve_recipe
from taskfoundry.grading.suite import suite_tarball
from taskfoundry.kinds.program.package import without_reference_failures
from taskfoundry.kinds.program.reference import REFERENCE_FAILS, ReferenceGrade
from taskfoundry.kinds.program.results import FilterStage
from taskfoundry.kinds.program.testgen.stage import write_suite
from taskfoundry.kinds.program.ub import nodeid, undefined_behaviour
from taskfoundry.models import CoverageReport, DropRecord
from taskfoundry.naming import TaskNames, work_dir
from taskfoundry.sources import resolve_source

from conftest import make_repo

# `add 5` overflows an int (undefined: the gold's build wraps it, another may not); `add -5` does not
ADD_C = """#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  if (argc < 3) { fputs("usage: add add N\\n", stderr); return 2; }
  int n = atoi(argv[2]);
  int sum = n + INT_MAX;
  printf("%d\\n", sum);
  return 0;
}
"""
MAKEFILE = "add: add.c\n\t$(CC) $(CFLAGS) -o add add.c $(LDFLAGS)\nclean:\n\trm -f add *.o *.gcno *.gcda\n"
TESTS = """from tfrun import run


def test_overflow():
    assert run(["add", "5"]).stdout == "not what any build prints\\n"


def test_plain():
    assert run(["add", "-5"]).stdout == "not what any build prints either\\n"
"""
FAILED = ["eval.tests.test_add.test_overflow", "eval.tests.test_add.test_plain"]


@pytest.fixture(scope="module")
def add_build(tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("ub")
    repo = make_repo(tmp / "add", {"add.c": ADD_C, "Makefile": MAKEFILE})
    co = resolve_source(str(repo), work_dir(tmp))
    names = TaskNames.of(co, "taskfoundry-test", tmp)
    recipe = resolve_recipe(co, None, base_image, docker_client, names, None)
    suite = tmp / "suite"
    write_suite(suite, {"test_add.py": TESTS})
    return run_build(co, recipe, base_image, names, docker_client), suite_tarball(suite)


@pytest.mark.docker
def test_ubsan_names_the_overflow_only_on_the_call_that_overflows(add_build, docker_client) -> None:  # type: ignore[no-untyped-def]
    built, suite = add_build
    assert built.recipe.coverage == "gcov"
    found = undefined_behaviour(built.image, built.recipe, suite, FAILED, docker_client)
    assert set(found) == {FAILED[0]}  # test_plain fails too, with no undefined behaviour
    assert found[FAILED[0]].startswith("add.c:7:") and "signed integer overflow" in found[FAILED[0]]
    # without the sanitizer (a build that is not gcc's is not rebuilt): nothing is named
    other = built.recipe.model_copy(update={"coverage": "none"})
    assert undefined_behaviour(built.image, other, suite, FAILED, docker_client) == {}


def test_the_drop_record_names_the_cause() -> None:
    grade = ReferenceGrade(
        None, dict.fromkeys(FAILED, "failed"), 3, {FAILED[0]: "add.c:7:13: runtime error: x"}
    )
    filt = FilterStage(
        kept=[*FAILED, "eval.tests.test_add.test_ok"],
        dropped={},
        dummy_pass_rate=0.0,
        coverage=CoverageReport.from_lines({}, {}),
    )
    dropped = without_reference_failures(filt, grade).dropped
    records: dict[str, DropRecord] = {name: recs[0] for name, recs in dropped.items()}
    assert {r.id for r in records.values()} == {REFERENCE_FAILS}
    assert "undefined behaviour in the gold (UBSan): add.c:7:13" in records[FAILED[0]].detail
    assert "undefined" not in records[FAILED[1]].detail
    assert records[FAILED[0]].timestamp <= datetime.now(UTC)


def test_a_junit_id_is_run_by_its_pytest_id() -> None:
    assert nodeid("eval.tests.test_add.test_overflow") == "eval/tests/test_add.py::test_overflow"
    assert nodeid("eval.tests.test_add.TestX.test_y") == "eval/tests/test_add.py::TestX::test_y"
