"""Why the reference fails a test: undefined behaviour, named by a sanitizer build of the gold.

The reference is the gold's own source rebuilt by `compile.sh` in the cleanroom; where the two
answer a call differently, the usual cause in C is undefined behaviour (a read past a buffer, an
overflowing int) that two builds resolve differently. The coverage build, with gcc's
`--coverage` swapped for UBSan's flags, is rebuilt in a throwaway container of the build image
(the gold's own environment, its runtime data where the gold looks for it), and each test the
reference failed runs alone against it; what UBSan reports is the test's cause. A call that
reports nothing is not called undefined behaviour: only what the sanitizer saw is named.
"""

from __future__ import annotations

import logging

import docker

from taskfoundry.builders.recipe import Recipe
from taskfoundry.layout import COV_BUILD, COV_ROOT
from taskfoundry.naming import TESTS_DIR, junit_file
from taskfoundry.pipeline.settings import PROBE_LIMITS
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)

# the whole runtime linked in: the cleanroom's and the build image's loaders need no libubsan
UB_FLAGS = "-fsanitize=undefined -fno-omit-frame-pointer -static-libubsan"
UB_BUILD = "/cov-ub-build"
WORK = "/tmp/tf-ub"
REPORT = f"{WORK}/report"
BUILD_SECONDS = 1800.0
TEST_SECONDS = 120.0
MAX_TESTS = 20  # the first this many failing tests are run; the rest are not named
REPORT_CHARS = 400


def ub_script(recipe: Recipe) -> str | None:
    """The coverage build with UBSan in place of gcov, in a build directory of its own; None for a
    build that is not gcc's (Rust, Go, Python: no undefined behaviour of this kind to name)."""
    if recipe.coverage != "gcov":
        return None
    lines = [
        line.replace("-Db_coverage=true", "-Db_sanitize=undefined")
        .replace("--coverage", UB_FLAGS)
        .replace(COV_BUILD, UB_BUILD)
        for line in recipe.coverage_build
    ]
    return "\n".join(["set -e", *lines]) + "\n"


def nodeid(junit: str) -> str:
    """pytest's id of a branch test from its JUnit id: `eval.tests.test_a.test_b` ->
    `eval/tests/test_a.py::test_b`."""
    file = junit_file(junit)
    rest = junit.removeprefix(TESTS_DIR.replace("/", ".") + "." + file.removesuffix(".py") + ".")
    return f"{TESTS_DIR}/{file}::{rest.replace('.', '::')}"


def first_report(text: str) -> str | None:
    """UBSan's first `runtime error:` line, without the path before the source file's name."""
    for line in text.splitlines():
        if "runtime error:" in line:
            where, _, what = line.partition(": runtime error:")
            return f"{where.rsplit('/', 1)[-1]}: runtime error:{what}"[:REPORT_CHARS]
    return None


def undefined_behaviour(
    image: str, recipe: Recipe, suite: bytes, failed: list[str], client: docker.DockerClient
) -> dict[str, str]:
    """Test -> what UBSan reported when the gold, rebuilt with it, ran that test (only the tests
    it reported on); {} when the build is not gcc's or the sanitizer build fails (logged)."""
    script = ub_script(recipe)
    if script is None or not failed:
        return {}
    with DockerSandbox(image, PROBE_LIMITS, client=client) as box:
        box.exec(["mkdir", "-p", f"{WORK}/ws"], timeout=30)
        box.put_file(script.encode(), f"{WORK}/build.sh")
        box.put_file(suite, f"{WORK}/suite.tar.gz")
        built = box.exec(
            f"cd {COV_ROOT} && {{ make clean >/dev/null 2>&1 || true; }} && sh -e {WORK}/build.sh",
            timeout=BUILD_SECONDS,
        )
        if not built.ok:
            log.warning("the UBSan build of the gold failed: %s", built.text()[-500:])
            return {}
        box.exec(["tar", "-xzf", f"{WORK}/suite.tar.gz", "-C", f"{WORK}/ws"], timeout=60)
        return {name: why for name in failed[:MAX_TESTS] if (why := _run_alone(box, recipe, name))}


def _run_alone(box: DockerSandbox, recipe: Recipe, name: str) -> str | None:
    """The test run alone against the UBSan build; UBSan's first report, or None."""
    env = {
        "TF_EXECUTABLE": f"{COV_ROOT}/{recipe.coverage_executable}",
        "TF_PASSENV": "UBSAN_OPTIONS",
        "UBSAN_OPTIONS": f"log_path={REPORT}:print_stacktrace=0",
    }
    box.exec(f"rm -f {REPORT}.*", timeout=30)
    box.exec(
        ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", nodeid(name)],
        timeout=TEST_SECONDS,
        env=env,
        workdir=f"{WORK}/ws",
    )
    reports = box.exec(f"cat {REPORT}.* 2>/dev/null", timeout=30)
    return first_report(reports.stdout.decode(errors="replace"))
