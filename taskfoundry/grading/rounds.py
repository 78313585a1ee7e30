"""A suite run against several programs in one pytest session (the filter's gold runs and
dummies): pytest starts and collects once per container instead of once per run.

The container is prepared as `suite.run_suite` prepares it (steering files removed, the
suite copied in and sealed, pytest as root with each program call dropped to its own uid by
tfrun, the container frozen after the run). The programs, and assets/grading/suite_rounds.py
that swaps `./executable` between rounds, sit in eval/ (root's alone once sealed).
"""

from __future__ import annotations

import json
import shlex

from taskfoundry.assets import asset
from taskfoundry.errors import SandboxError
from taskfoundry.grading import scripts
from taskfoundry.grading.junit import TestOutcome, exception_of
from taskfoundry.grading.sandbox import WS, GradingSandbox, TooLarge
from taskfoundry.grading.steps import StepRunner
from taskfoundry.grading.suite import copy_in
from taskfoundry.naming import junit_id

ROUNDS_DIR = "eval/.tf-rounds"  # relative to the workspace
Rounds = list[dict[str, TestOutcome]]  # per program: JUnit name -> outcome


def run_rounds(
    box: GradingSandbox, steps: StepRunner, suite: bytes, programs: list[bytes | None], part: tuple[int, int]
) -> Rounds:
    """The suite against each of `programs` (None: the workspace's own executable), in one
    session; `part` = (i, n): only every n-th collected test from the i-th."""
    cfg = steps.config
    steps.run(box, "remove_pytest_steering", scripts.scrub_cmd(), root=True)
    copy_in(box, steps, "copy_tests", suite)
    paths = _put_programs(box, steps, programs)
    settings = {"executable": f"{WS}/executable", "rounds": paths, "slice": list(part), "out": _out()}
    box.put_file(json.dumps(settings).encode(), f"{WS}/{ROUNDS_DIR}/settings.json")
    for plugin in ("suite_rounds.py", "session_reset.py"):
        box.put_file(asset(f"grading/{plugin}"), f"{WS}/{ROUNDS_DIR}/{plugin}")
    steps.run(box, "seal_tests", scripts.seal_cmd(cfg.isolate, cfg.user), root=True)
    env = {"HOME": "/root" if cfg.isolate else cfg.home, **scripts.TEST_ENV}
    env |= {"PYTHONPATH": f"{WS}/{ROUNDS_DIR}", "TF_ROUNDS": f"{WS}/{ROUNDS_DIR}/settings.json"}
    if cfg.isolate:
        env["TF_PROGRAM_UID"] = str(cfg.program_uid)
    # --tb=no: a failure's traceback has pytest parse the whole test module again for its
    # source (0.14 s a failure in figlet's 347-test file, and a dummy fails them all); the
    # crash message, which the filter reads, stays
    command = scripts.run_tests_cmd(1) + " -p suite_rounds --continue-on-collection-errors --tb=no"
    timeout = cfg.test_timeout * len(programs)
    run = steps.run_untrusted(
        box, "run_tests_rounds", command, scripts.TESTS_LOG, timeout, env=env, grader=cfg.isolate
    )
    try:
        raw = json.loads(box.read_file(_out(), cfg.results_mb * 1024 * 1024 * len(programs)))
    except (FileNotFoundError, TooLarge, ValueError) as exc:
        raise SandboxError(f"the suite's rounds wrote no outcomes ({exc}): {run.output[-1500:]}") from exc
    return [{junit_id(node): _outcome(*row) for node, row in one.items()} for one in raw]


def _out() -> str:
    return f"{WS}/{ROUNDS_DIR}/outcomes.json"


def _put_programs(box: GradingSandbox, steps: StepRunner, programs: list[bytes | None]) -> list[str]:
    """Where each round's program is in the container; the gold kept aside first."""
    gold = f"{WS}/{ROUNDS_DIR}/gold"
    steps.run(box, "keep_gold", f"mkdir -p {ROUNDS_DIR} && cp executable {shlex.quote(gold)}", root=True)
    paths = []
    for i, program in enumerate(programs):
        if program is None:
            paths.append(gold)
            continue
        path = f"{WS}/{ROUNDS_DIR}/program-{i}"
        box.put_file(program, path, mode=0o755)
        paths.append(path)
    return paths


def _outcome(status: str, message: str, text: str) -> TestOutcome:
    """As `junit._case_outcome` reads the same failure from a JUnit report."""
    if status in ("passed", "skipped"):
        return TestOutcome(status, f"{message} {text}"[:500] if status == "skipped" else "")
    return TestOutcome(status, f"{message} {text}"[:500], exception_of(message))
