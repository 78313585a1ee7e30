"""mutation_stage: the kept suite against mutants of the reference (after filter, before package),
then, when asked, mutation-guided generation: tests that kill survivors join the suite."""

from __future__ import annotations

import logging
import time

import docker

from taskfoundry.config import Config
from taskfoundry.errors import SandboxError, StageError
from taskfoundry.models import CoverageReport, DropRecord
from taskfoundry.mutation import guided as g
from taskfoundry.mutation.analyze import analyze, run_planned
from taskfoundry.mutation.models import GuidedSummary, MutationReport
from taskfoundry.mutation.rebuild import rebuild_plan
from taskfoundry.mutation.select import Planned, tests_by_line
from taskfoundry.mutation.worker import MutationError
from taskfoundry.pipeline import stages
from taskfoundry.pipeline.results import (
    BuildStage,
    CleanroomStage,
    FilterStage,
    GenerateStage,
    MutationStage,
    SourceResult,
)
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.testgen.thirdparty import third_party_prefixes

log = logging.getLogger(__name__)


def mutation_stage(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    filt: FilterStage,
    config: Config,
    client: docker.DockerClient,
) -> MutationStage:
    """A task the analysis cannot run on gets a report that says why (`skipped`), not a
    failed build; a failing Docker engine fails the stage."""
    cfg = config.mutation
    meta = {"budget": cfg.budget, "seed": cfg.seed}
    skipped = f"the branch is marked: {filt.branch_error}" if filt.branch_error else None
    if not filt.kept:
        skipped = skipped or "no kept tests"
    if skipped:
        return MutationStage(report=MutationReport(skipped=skipped, **meta), gen=gen, filt=filt)
    try:
        report = analyze(build.image, build.recipe, src.path, gen.suite, filt.kept, gen.per_test_lines, cfg)
    except MutationError as exc:
        log.warning("%s: no mutation analysis: %s", src.task_id, exc)
        return MutationStage(report=MutationReport(skipped=str(exc), **meta), gen=gen, filt=filt)
    except SandboxError as exc:
        raise StageError("mutation", f"infrastructure failure: {exc}") from exc
    if not (cfg.guided and report.survived):
        return MutationStage(report=report, gen=gen, filt=filt)
    try:
        return strengthen(src, build, clean, gen, filt, report, config, client)
    except MutationError as exc:  # the first analysis stands; say why nothing was added
        log.warning("%s: no guided generation: %s", src.task_id, exc)
        failed = GuidedSummary(score_before=report.score, survived_before=report.survived, error=str(exc))
        return MutationStage(report=report.model_copy(update={"guided": failed}), gen=gen, filt=filt)
    except SandboxError as exc:
        raise StageError("mutation", f"infrastructure failure in guided generation: {exc}") from exc


def strengthen(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    filt: FilterStage,
    report: MutationReport,
    config: Config,
    client: docker.DockerClient,
) -> MutationStage:
    """Tests that kill survivors, linted and filtered like any other, added to the suite;
    the survivors analysed again with them."""
    cfg, start = config.mutation, time.monotonic()
    summary = GuidedSummary(score_before=report.score, survived_before=report.survived)
    mutants = g.survivors_of(report.records, src.path)
    targets = {(m.file, m.line) for m in mutants}
    candidates, summary.probes_run = _candidates(src, build, config, targets, client)
    summary.candidates = len(candidates)
    deadline = start + cfg.max_seconds
    rebuild = rebuild_plan(build.recipe)
    found = (
        g.search(build.image, rebuild, gen.suite, mutants, candidates, cfg, deadline) if candidates else {}
    )
    summary.killers = len(found)
    if not found:
        summary.seconds = round(time.monotonic() - start, 2)
        return MutationStage(report=report.model_copy(update={"guided": summary}), gen=gen, filt=filt)
    files, probes = g.guided_tests(found, stages.program_name(build), config.explorer.seed)
    lines = {name: {f: sorted(ls) for f, ls in k.covered.items()} for name, k in probes.items()}
    new_kept, new_dropped = _lint_and_filter(src, gen, clean, files, lines, config, client)
    summary.tests_added, summary.tests_dropped = len(new_kept), len(new_dropped)
    gen2, filt2 = _merged(src, gen, filt, files, lines, new_kept, new_dropped, config)
    by_line = tests_by_line(new_kept, lines)
    planned = [Planned(m, tuple(by_line.get(m.file, {}).get(m.line, ()))) for m in mutants]
    again = run_planned(build.image, rebuild, gen2.suite, [p for p in planned if p.tests], cfg, deadline)
    redone = {r.id: r for r in again.records}
    records = [redone.get(r.id, r) for r in report.records]
    summary.killed = sum(r.status == "killed" for r in again.records)
    summary.seconds = round(time.monotonic() - start, 2)
    final = MutationReport.from_records(
        records,
        candidates=report.candidates,
        budget=report.budget,
        seed=report.seed,
        unreliable_tests=sorted(set(report.unreliable_tests) | again.unreliable),
        exhausted="time" if report.exhausted or again.out_of_time else None,
        seconds=round(report.seconds + summary.seconds, 2),
        guided=summary,
    )
    return MutationStage(report=final, gen=gen2, filt=filt2)


def _candidates(
    src: SourceResult, build: BuildStage, config: Config, targets: set[g.Target], client: docker.DockerClient
) -> tuple[list[g.Kept], int]:
    """Probes that reach the survivors' lines: the explorer again, with the next seed."""
    cfg = config.mutation
    explore = config.explorer.model_copy(
        update={"seed": config.explorer.seed + 1, "max_probes": cfg.guided_probes, "coverage_target": 2.0}
    )
    job = g.coverage_job(
        build.recipe.coverage,
        stages.go_module(src.path),
        third_party_prefixes(src.path),
        config.explorer.probe_timeout,
    )
    names = {stages.program_name(build), "executable"}
    log_path = config.work_dir / "generate" / src.task_id / "guided-probes.jsonl"
    with DockerSandbox(build.image, stages.PROBE_LIMITS, client=client) as box:
        return g.candidate_probes(box, src.path, names, job, explore, targets, cfg.guided_per_line, log_path)


def _lint_and_filter(
    src: SourceResult,
    gen: GenerateStage,
    clean: CleanroomStage,
    files: dict[str, str],
    lines: dict[str, dict[str, list[int]]],
    config: Config,
    client: docker.DockerClient,
) -> tuple[list[str], dict[str, list[DropRecord]]]:
    """The new tests through the same linter and filter as the generated ones, on their own."""
    suite = config.work_dir / "suites" / src.task_id / f"{gen.branch}-mutants"
    stages.write_suite(suite, files)
    alone = gen.model_copy(
        update={"suite": suite, "tests": list(lines), "generated": len(lines), "per_test_lines": lines}
    )
    lint = stages.lint_stage(alone)
    try:
        filt = stages.filter_stage(alone, lint, clean, config, client)
    except StageError as exc:  # a kept test failed the final gold run: add none of them
        log.warning("%s: guided tests not added: %s", src.task_id, exc)
        return [], {}
    if filt.branch_error:
        raise SandboxError(filt.branch_error)
    return filt.kept, filt.dropped


def _merged(
    src: SourceResult,
    gen: GenerateStage,
    filt: FilterStage,
    files: dict[str, str],
    lines: dict[str, dict[str, list[int]]],
    kept: list[str],
    dropped: dict[str, list[DropRecord]],
    config: Config,
) -> tuple[GenerateStage, FilterStage]:
    """The suite with the guided tests, as the generate and filter stages would describe it."""
    suite = config.work_dir / "suites" / src.task_id / f"{gen.branch}-guided"
    old = {p.name: p.read_text() for p in sorted((gen.suite / "eval" / "tests").glob("test_*.py"))}
    stages.write_suite(suite, {**old, **files})
    per_test = {**gen.per_test_lines, **lines}
    gen2 = gen.model_copy(
        update={
            "suite": suite,
            "tests": [*gen.tests, *lines],
            "generated": gen.generated + len(lines),
            "per_test_lines": per_test,
        }
    )
    all_kept = [*filt.kept, *kept]
    covered: dict[str, set[int]] = {}
    for name in all_kept:
        for file, nums in per_test.get(name, {}).items():
            covered.setdefault(file, set()).update(nums)
    total = {f: set(c.covered) | set(c.missed) for f, c in filt.coverage.files.items()}
    filt2 = filt.model_copy(
        update={
            "kept": all_kept,
            "dropped": {**filt.dropped, **dropped},
            "coverage": CoverageReport.from_lines(covered, total),
        }
    )
    return gen2, filt2
