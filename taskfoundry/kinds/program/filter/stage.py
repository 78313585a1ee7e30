"""The filter stage: the suite on gold N times and on each dummy in the cleanroom image; what
is kept passes a last gold run."""

from __future__ import annotations

import logging
from collections import Counter

import docker

from taskfoundry.errors import FilterError, SandboxError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.filter.run import Grader, final_check, run_filter
from taskfoundry.kinds.program.results import (
    CleanroomStage,
    FilterStage,
    GenerateStage,
    LintStage,
    NoLogicReport,
)
from taskfoundry.kinds.program.settings import FilterConfig, FilterSettings
from taskfoundry.kinds.program.testgen.replay import ReplayTable, no_logic_dummies
from taskfoundry.kinds.program.testgen.replay_record import load_replay
from taskfoundry.models import CoverageReport, DropRecord

log = logging.getLogger(__name__)

# A suite this small runs faster in one pytest process: starting xdist's workers costs more
# (0.6 s a run, ten runs a filter) than they save. The grade is the same either way.
SMALL_SUITE = 60


def filter_stage(
    gen: GenerateStage,
    lint: LintStage,
    clean: CleanroomStage,
    settings: FilterSettings,
    client: docker.DockerClient,
    require_kept: bool = True,
) -> FilterStage:
    """`require_kept`: a suite left with no test is no task (FilterError); the guided step's
    extra tests, filtered on their own, may all go."""
    usage = clean.usage.get("", "")
    table = load_replay(gen.replay)  # the replay dummy's table (testgen.replay), read once
    total = {f: set(c.covered) | set(c.missed) for f, c in gen.coverage.files.items()}
    pre = pre_dropped(lint, settings.filter)
    recall = {"recall": sorted(lint.recall), "recall_in_resolve": settings.filter.recall_in_resolve}
    try:
        grader = Grader.load(client, clean.image, gen.suite, _harness(settings.harness, len(gen.tests)))
        res = run_filter(grader, gen.tests, usage, settings.filter, pre, no_logic_of(table, settings.filter))
    except SandboxError as exc:  # infrastructure, not a verdict: mark the branch, not its tests
        log.error("filter of %s failed: %s", gen.branch, exc)
        return FilterStage(
            kept=[],
            dropped=pre,
            dummy_pass_rate=0.0,
            coverage=CoverageReport.from_lines({}, total),
            branch_error=f"infrastructure failure in the filter: {exc}",
            **recall,
        )
    if require_kept and not res.kept:
        raise FilterError(nothing_kept(res.dropped))
    failed = final_check(grader, res.kept)
    if failed:
        raise FilterError(
            f"{len(failed)} kept tests failed the final gold run "
            f"(first: {failed[0]}); the task is not packaged",
        )
    covered: dict[str, set[int]] = {}
    for name in res.kept:
        for f, lines in gen.per_test_lines.get(name, {}).items():
            covered.setdefault(f, set()).update(lines)
    return FilterStage(
        kept=res.kept,
        dropped=res.dropped,
        dummy_pass_rate=res.dummy_pass_rate,
        coverage=CoverageReport.from_lines(covered, total),
        no_logic=no_logic_report(res.passes, len(gen.tests), len(res.kept), table),
        **recall,
    )


def no_logic_of(table: ReplayTable | None, config: FilterConfig) -> dict[str, bytes]:
    """The no-logic dummies of this program the config asks for (testgen.replay)."""
    if table is None:
        return {}
    return {name: code for name, code in no_logic_dummies(table).items() if name in config.no_logic}


def no_logic_report(
    passes: dict[str, int], generated: int, kept: int, table: ReplayTable | None
) -> NoLogicReport:
    """What the no-logic submissions passed of the suite before the filter; after it, by
    construction, none of the kept tests (benchmarks/replay_attack.py measures an attacker's
    own, larger table on a packaged task)."""
    rates = {name: round(n / generated, 4) if generated else 0.0 for name, n in passes.items()}
    return NoLogicReport(
        public_probes=table.probes if table else 0,
        public_seeds=table.seeds if table else [],
        pass_rate_before=rates,
        replay_pass_rate_before=rates.get("replay"),
        replay_pass_rate=0.0 if "replay" in rates and kept else None,
    )


def nothing_kept(dropped: dict[str, list[DropRecord]]) -> str:
    """Why a suite with no test left is no task: the drop reasons counted, and the first."""
    reasons = Counter(records[0].id for records in dropped.values() if records)
    first = next((r[0] for r in dropped.values() if r), None)
    detail = f"; first: {first.detail[:300]}" if first and first.detail else ""
    counts = ", ".join(f"{why} {n}" for why, n in reasons.most_common())
    return f"no test passed the filter ({counts or 'none generated'}){detail}; the task is not packaged"


def pre_dropped(lint: LintStage, config: FilterConfig) -> dict[str, list[DropRecord]]:
    """What is out before any run: the linter's HIGH findings, and the tests that recall a
    published algorithm's bytes unless the config keeps them in the resolve metric (one such
    test puts a whole task beyond a source-blind rebuild: resolved is all tests passing)."""
    out = {k: list(v) for k, v in lint.dropped.items()}
    if not config.recall_in_resolve:
        for name, records in lint.recall.items():
            out.setdefault(name, []).extend(records)
    return out


def _harness(harness: EvalConfig, tests: int) -> EvalConfig:
    return harness.model_copy(update={"pytest_workers": 1}) if tests < SMALL_SUITE else harness
