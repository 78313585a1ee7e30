"""The mutation stage (the program kind's `strengthen`): the kept suite against mutants of the
reference, then, when asked, mutation-guided generation: tests that kill survivors join the
suite. It hands on the suite to package and the filter's verdict with the report in it."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import docker

from taskfoundry.errors import FilterError, GenerationError, MutationError, SandboxError
from taskfoundry.kinds.program.filter.stage import filter_stage
from taskfoundry.kinds.program.lint import lint_stage
from taskfoundry.kinds.program.mutate import guided as g
from taskfoundry.kinds.program.mutate.analyze import Done, analyze, run_planned
from taskfoundry.kinds.program.mutate.models import GuidedSummary, MutationReport
from taskfoundry.kinds.program.mutate.pool import WorkerPool
from taskfoundry.kinds.program.mutate.rebuild import rebuild_plan
from taskfoundry.kinds.program.mutate.revision import revision_request
from taskfoundry.kinds.program.mutate.select import Planned, tests_by_line
from taskfoundry.kinds.program.results import CleanroomStage, FilterStage, GenerateStage, LintStage
from taskfoundry.kinds.program.settings import ExplorerConfig, MutationSettings
from taskfoundry.kinds.program.testgen.agent_gen import AgentGenerator
from taskfoundry.kinds.program.testgen.spare import SPARE_FILE, read_spare
from taskfoundry.kinds.program.testgen.stage import (
    cleanroom_view,
    generation_context,
    go_module,
    suite_argv0,
    write_suite,
)
from taskfoundry.kinds.program.testgen.thirdparty import third_party_prefixes
from taskfoundry.kinds.program.testgen.writer import call_timeout
from taskfoundry.models import CoverageReport, DropRecord
from taskfoundry.mutation.operators import Mutant
from taskfoundry.naming import junit_file
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.pipeline.settings import PROBE_LIMITS
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)
Strengthened = tuple[GenerateStage, FilterStage]


def mutation_stage(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    lint: LintStage,
    filt: FilterStage,
    settings: MutationSettings,
    client: docker.DockerClient,
) -> Strengthened:
    """A task the analysis cannot run on gets a report that says why (`skipped`), not a
    failed build; a failing Docker engine (SandboxError) fails the stage. `max_seconds`
    bounds the whole stage: first analysis, guided step and second analysis share one deadline."""
    settings = _for_slow(settings, gen.slow_timeout)
    cfg = settings.mutation
    deadline = time.monotonic() + cfg.max_seconds
    meta = {"budget": cfg.budget, "seed": cfg.seed}
    skipped = f"the branch is marked: {filt.branch_error}" if filt.branch_error else None
    if not filt.kept:
        skipped = skipped or "no kept tests"
    if skipped:
        return gen, _with(filt, MutationReport(skipped=skipped, **meta))
    harness = settings.filter.harness
    with WorkerPool(build.image, rebuild_plan(build.recipe, src.path), cfg, harness) as pool:
        try:
            report = analyze(
                build.image,
                build.recipe,
                src.path,
                gen.suite,
                filt.kept,
                gen.per_test_lines,
                cfg,
                harness,
                deadline,
                pool,
            )
        except MutationError as exc:
            log.warning("%s: no mutation analysis: %s", src.task_id, exc)
            return gen, _with(filt, MutationReport(skipped=str(exc), **meta))
        if not (cfg.guided and report.survived):
            return gen, _with(filt, report)
        try:
            return strengthen(src, build, clean, gen, filt, report, settings, client, deadline, pool)
        except MutationError as exc:  # the first analysis stands; say why nothing was added
            log.warning("%s: no guided generation: %s", src.task_id, exc)
            return gen, _with(filt, _guided_failed(report, settings, str(exc)))


def _for_slow(settings: MutationSettings, slow_timeout: float | None) -> MutationSettings:
    """A slow program's mutants get the time its tests give each call (`call_timeout`): at
    `program_timeout`'s 5 s every mutant of ansible-lint, whose lints take 3 to 10 s, counted
    as a hang (22 of 22 "timeout", no score)."""
    timeout = call_timeout(slow_timeout)
    if timeout is None or timeout <= settings.mutation.program_timeout:
        return settings
    mutation = settings.mutation.model_copy(update={"program_timeout": timeout})
    return settings.model_copy(update={"mutation": mutation})


def _guided_failed(report: MutationReport, settings: MutationSettings, error: str) -> MutationReport:
    summary = GuidedSummary(
        score_before=report.score, survived_before=report.survived, generator=_guide(settings), error=error
    )
    return report.model_copy(update={"guided": summary})


def _with(filt: FilterStage, report: MutationReport) -> FilterStage:
    return filt.model_copy(update={"mutation": report})


def strengthen(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    filt: FilterStage,
    report: MutationReport,
    settings: MutationSettings,
    client: docker.DockerClient,
    deadline: float,
    pool: WorkerPool,
) -> Strengthened:
    """Tests that kill survivors (the guided step: `_guided_tests`), linted and filtered like
    any other, added to the suite; the survivors analysed again with them. Past `deadline`
    (the stage's), what is left is not started: the report says `exhausted: time`."""
    start = time.monotonic()
    summary = GuidedSummary(
        score_before=report.score, survived_before=report.survived, generator=_guide(settings)
    )
    if start >= deadline:
        summary.error = "the stage's time budget (mutation.max_seconds) ended before the guided step"
        return gen, _with(filt, report.model_copy(update={"guided": summary, "exhausted": "time"}))
    mutants = g.survivors_of(report.records, src.path)
    files, lines = _guided_tests(src, build, clean, gen, mutants, settings, client, summary, deadline, pool)
    if not files:
        summary.seconds = round(time.monotonic() - start, 2)
        return gen, _with(filt, report.model_copy(update={"guided": summary}))
    filtering = time.monotonic()
    new_kept, new_dropped, new_recall = _lint_and_filter(src, gen, clean, files, lines, settings, client)
    summary.tests_added, summary.tests_dropped = len(new_kept), len(new_dropped)
    summary.filter_seconds = round(time.monotonic() - filtering, 2)
    gen2, filt2 = _merged(src, gen, filt, files, lines, (new_kept, new_dropped, new_recall), settings)
    by_line = tests_by_line(new_kept, lines)
    blind = tuple(t for t in new_kept if t not in lines)  # no coverage of its own: try it on every one
    planned = [Planned(m, (*by_line.get(m.file, {}).get(m.line, ()), *blind)) for m in mutants]
    todo = [p for p in planned if p.tests]
    analysing = time.monotonic()
    if time.monotonic() < deadline:
        pool.use_suite(gen2.suite)
        again = run_planned(pool, todo, deadline)
    else:
        again = Done(out_of_time=bool(todo))  # the new tests are kept; the survivors stay as analysed
    summary.analysis_seconds = round(time.monotonic() - analysing, 2)
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
    return gen2, _with(filt2, final)


#: what a guided step writes: test file name -> text, and JUnit name -> file -> lines it
#: covers (a test missing there is tried on every survivor)
NewTests = tuple[dict[str, str], dict[str, dict[str, list[int]]]]


def _guided_tests(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    mutants: list[Mutant],
    settings: MutationSettings,
    client: docker.DockerClient,
    summary: GuidedSummary,
    deadline: float,
    pool: WorkerPool,
) -> NewTests:
    """The guided step, by the generator that wrote the suite: the agent gets the survivors
    back as a revision request; otherwise the explorer searches for probes that tell them apart."""
    if _guide(settings) == "agent":
        return _agent_tests(src, build, clean, gen, mutants, settings, client)
    return _explorer_tests(src, build, clean, gen, mutants, settings, client, summary, deadline, pool)


def _guide(settings: MutationSettings) -> str:
    return "agent" if settings.generator.name == "agent" else "explorer"


def _explorer_tests(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    mutants: list[Mutant],
    settings: MutationSettings,
    client: docker.DockerClient,
    summary: GuidedSummary,
    deadline: float,
    pool: WorkerPool,
) -> NewTests:
    targets = {(m.file, m.line) for m in mutants}
    start = time.monotonic()
    candidates, summary.probes_run = _candidates(src, build, clean, gen, settings, targets, client, deadline)
    summary.candidates = len(candidates)
    summary.spare_candidates = sum(k.feature == g.SPARE for k in candidates)
    summary.explore_seconds = round(time.monotonic() - start, 2)
    start = time.monotonic()
    found = g.search(pool, mutants, candidates, deadline) if candidates else {}
    summary.killers = len(found)
    summary.search_seconds = round(time.monotonic() - start, 2)
    if not found:
        return {}, {}
    timeout = call_timeout(gen.slow_timeout)  # a slow program's, as its generated tests give it
    files, probes = g.guided_tests(found, build.program, settings.explorer.seed or 0, timeout)
    return files, {name: {f: sorted(ls) for f, ls in k.covered.items()} for name, k in probes.items()}


def _agent_tests(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    mutants: list[Mutant],
    settings: MutationSettings,
    client: docker.DockerClient,
) -> NewTests:
    """One more run of the agent, in a container of the build image, with the survivors as its
    revision request; no test from it (a model error, an empty answer) is a MutationError."""
    old = _suite_files(gen.suite)
    request = revision_request(mutants, src.path)
    log_dir = settings.names(src).generate_dir
    with DockerSandbox(build.image, PROBE_LIMITS, client=client) as box:
        ctx = generation_context(box, src, build, clean, settings.generator, log_dir)
        try:
            branch = AgentGenerator().revise(ctx, old, request, "mutants")
        except GenerationError as exc:
            raise MutationError(f"the agent's revision added no tests: {exc.message}", exc.log) from exc
    clash = sorted(set(branch.files) & set(old))  # it would replace kept tests: not taken
    if clash:
        log.warning("%s: the agent's revision rewrote %s; not taken", src.task_id, ", ".join(clash))
    files = {name: text for name, text in branch.files.items() if name not in old}
    lines = {t: v for t, v in branch.per_test_lines.items() if junit_file(t) in files}
    return files, lines


def _candidates(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    settings: MutationSettings,
    targets: set[g.Target],
    client: docker.DockerClient,
    deadline: float,
) -> tuple[list[g.Kept], int]:
    """Probes that reach the survivors' lines: first the generate stage's spare probes (run
    and not kept: they reached no new line), then, for the lines none of them reaches, the
    explorer again with the next seed. Returns them and how many probes ran here."""
    cfg, explorer = settings.mutation, settings.explorer
    spare = read_spare(settings.names(src).generate_dir / SPARE_FILE)
    chosen, targets = g.from_spare(spare, targets, cfg.guided_per_line)
    if not targets:
        return chosen, 0
    explore = guided_explorer(settings, deadline)
    job = g.coverage_job(
        build.recipe.coverage,
        go_module(src.path),
        third_party_prefixes(src.path),
        gen.slow_timeout or explorer.probe_timeout,  # a slow program's, as the explorer found it
        clean.argv0,
        g.wall_clock(deadline),  # a batch of a slow program's probes runs minutes
    )
    names = {build.program, "executable"}
    log_path = settings.names(src).generate_dir / "guided-probes.jsonl"
    with (
        cleanroom_view(clean.image, client, explore.no_logic) as view,
        DockerSandbox(build.image, PROBE_LIMITS, client=client) as box,
    ):
        found, ran = g.candidate_probes(
            box, src.path, names, clean.usage, job, explore, targets, cfg.guided_per_line, log_path, view
        )
    return [*chosen, *found], ran


def guided_explorer(settings: MutationSettings, deadline: float) -> ExplorerConfig:
    """The guided step's exploration: the next seed, `guided_probes` at most, no coverage target,
    and no longer than what is left of the stage's deadline: on its own budget (the explorer's
    900 s) it could run a stage of 600 s 900 s past its deadline, and a source past its limit."""
    explorer, cfg = settings.explorer.seeded(), settings.mutation
    assert explorer.seed is not None
    left = max(deadline - time.monotonic(), 0.0)
    update = {"seed": explorer.seed + 1, "max_probes": cfg.guided_probes, "coverage_target": 2.0}
    return explorer.model_copy(update={**update, "max_seconds": min(explorer.max_seconds, left)})


def _lint_and_filter(
    src: SourceResult,
    gen: GenerateStage,
    clean: CleanroomStage,
    files: dict[str, str],
    lines: dict[str, dict[str, list[int]]],
    settings: MutationSettings,
    client: docker.DockerClient,
) -> tuple[list[str], dict[str, list[DropRecord]], list[str]]:
    """The new tests through the same linter and filter as the generated ones, on their own:
    kept, dropped, and those with a recall assertion."""
    suite = settings.names(src).suite_dir(f"{gen.branch}-mutants")
    write_suite(suite, files, clean.argv0)
    alone = gen.model_copy(
        update={"suite": suite, "tests": list(lines), "generated": len(lines), "per_test_lines": lines}
    )
    lint = lint_stage(alone)
    try:
        filt = filter_stage(alone, lint, clean, settings.filter, client, require_kept=False)
    except FilterError as exc:  # a kept test failed the final gold run: add none of them
        log.warning("%s: guided tests not added: %s", src.task_id, exc)
        return [], {}, []
    if filt.branch_error:
        raise SandboxError(filt.branch_error)
    return filt.kept, filt.dropped, filt.recall


def _merged(
    src: SourceResult,
    gen: GenerateStage,
    filt: FilterStage,
    files: dict[str, str],
    lines: dict[str, dict[str, list[int]]],
    new: tuple[list[str], dict[str, list[DropRecord]], list[str]],
    settings: MutationSettings,
) -> tuple[GenerateStage, FilterStage]:
    """The suite with the guided tests (`new`: kept, dropped, recall), as the generate and
    filter stages would describe it."""
    kept, dropped, recall = new
    suite = settings.names(src).suite_dir(f"{gen.branch}-guided")
    write_suite(suite, {**_suite_files(gen.suite), **files}, suite_argv0(gen.suite))
    per_test = {**gen.per_test_lines, **lines}
    gen2 = gen.model_copy(
        update={
            "suite": suite,
            "tests": [*gen.tests, *lines],
            "generated": gen.generated + len(lines),
            "per_test_lines": per_test,
            "test_origins": {**gen.test_origins, **dict.fromkeys(lines, "guided")},
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
            "recall": sorted({*filt.recall, *recall}),
            "coverage": CoverageReport.from_lines(covered, total),
        }
    )
    return gen2, filt2


def _suite_files(suite: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((suite / "eval" / "tests").glob("test_*.py"))}
