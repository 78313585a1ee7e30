"""run_filter: gold N times, then each dummy; drop tests with a recorded reason."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import docker
from pydantic import BaseModel, Field

from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.suite import suite_tarball
from taskfoundry.kinds.program.filter.dummies import render_dummy
from taskfoundry.kinds.program.filter.suite_run import (
    TestOutcome,
    cleanroom_workspace,
    run_rounds,
    run_suite,
    with_executable,
)
from taskfoundry.kinds.program.settings import FilterConfig
from taskfoundry.models import DropRecord


class FilterResult(BaseModel):
    kept: list[str]
    dropped: dict[str, list[DropRecord]]
    dummy_pass_rate: float  # share of tests passing at least one dummy, before filtering
    gold_runs: list[dict[str, str]] = Field(default_factory=list)
    passes: dict[str, int] = Field(default_factory=dict, description="tests each dummy passed, by name")


@dataclass(frozen=True)
class Grader:
    """One suite against the cleanroom's workspace, with the gold or a dummy as the program."""

    client: docker.DockerClient
    image: str
    suite: bytes
    workspace: bytes
    harness: EvalConfig

    @classmethod
    def load(cls, client: docker.DockerClient, image: str, suite: Path, harness: EvalConfig) -> Grader:
        return cls(client, image, suite_tarball(suite), cleanroom_workspace(client, image), harness)

    def run(self, executable: bytes | None = None) -> dict[str, TestOutcome]:
        """None: the gold the cleanroom holds."""
        workspace = with_executable(self.workspace, executable)
        return run_suite(self.client, self.image, self.suite, workspace, self.harness)

    def rounds(self, programs: list[bytes | None], parallel: int) -> list[dict[str, TestOutcome]]:
        """The suite against each program (None: the gold), one pytest session a container:
        `parallel` containers, each with every `parallel`-th test, their outcomes merged."""

        def part(i: int) -> list[dict[str, TestOutcome]]:
            return run_rounds(
                self.client, self.image, self.suite, self.workspace, self.harness, programs, (i, parallel)
            )

        with ThreadPoolExecutor(parallel, thread_name_prefix="filter") as pool:
            parts = list(pool.map(part, range(parallel)))
        return [{k: v for p in parts for k, v in p[r].items()} for r in range(len(programs))]


def run_filter(
    grader: Grader,
    tests: list[str],
    usage: str,
    config: FilterConfig,
    pre_dropped: dict[str, list[DropRecord]] | None = None,
    no_logic: dict[str, bytes] | None = None,
) -> FilterResult:
    """`tests` are JUnit names; `pre_dropped` carries lint drops into the same record;
    `no_logic`: more dummies by name, built for this program (testgen.replay: the replay
    table, the version and help printers)."""
    now = datetime.now(UTC)
    dropped: dict[str, list[DropRecord]] = {k: list(v) for k, v in (pre_dropped or {}).items()}
    programs: list[bytes | None] = [None] * config.gold_runs
    dummies = {dummy: render_dummy(dummy, usage) for dummy in config.dummies} | (no_logic or {})
    programs += list(dummies.values())
    if config.one_session:  # pytest starts once a container, not once a run
        runs = grader.rounds(programs, config.parallel)
    else:  # one container and one session per run
        with ThreadPoolExecutor(config.parallel, thread_name_prefix="filter") as pool:
            runs = list(pool.map(grader.run, programs))
    gold = runs[: config.gold_runs]
    for name in tests:
        record = _gold_verdict([run.get(name, TestOutcome("error", "not run")) for run in gold], now)
        if record:
            dropped.setdefault(name, []).append(record)
    passes: dict[str, int] = {}
    for dummy, results in zip(dummies, runs[config.gold_runs :], strict=True):
        passes[dummy] = 0
        for name in tests:
            if results.get(name, TestOutcome("error")).status == "passed":
                passes[dummy] += 1
                dropped.setdefault(name, []).append(DropRecord(id="dummy_pass", timestamp=now, detail=dummy))
    dummy_hits = sum(any(r.id == "dummy_pass" for r in dropped.get(n, [])) for n in tests)
    kept = [n for n in tests if n not in dropped]
    rate = dummy_hits / len(tests) if tests else 0.0
    summary = [{n: o.status for n, o in run.items()} for run in gold]
    return FilterResult(kept=kept, dropped=dropped, dummy_pass_rate=rate, gold_runs=summary, passes=passes)


def _gold_verdict(outcomes: list[TestOutcome], now: datetime) -> DropRecord | None:
    passed = [o.status == "passed" for o in outcomes]
    if all(passed):
        return None
    if any(o.timed_out for o in outcomes):
        return DropRecord(id="slow_or_hang", timestamp=now, detail=_first_message(outcomes))
    if not any(passed):
        return DropRecord(id="gold_fail", timestamp=now, detail=_first_message(outcomes))
    return DropRecord(
        id="gold_flaky", timestamp=now, detail=f"passed {sum(passed)} of {len(passed)} gold runs"
    )


def _first_message(outcomes: list[TestOutcome]) -> str:
    return next((o.message for o in outcomes if o.message), "")[:300]


def final_check(grader: Grader, kept: list[str]) -> list[str]:
    """Kept tests that did not pass one more gold run (empty list: all good)."""
    results = grader.run()
    return [n for n in kept if results.get(n, TestOutcome("error")).status != "passed"]
