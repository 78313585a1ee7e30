"""package_stage: write the task directory atomically and tag the ProgramBench-named images."""

from __future__ import annotations

import dataclasses
import logging
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import docker

from taskfoundry import atomic
from taskfoundry.errors import PackageError
from taskfoundry.grading.goldcode import submission_digest
from taskfoundry.grading.suite import suite_tarball
from taskfoundry.images.build import tag_alias
from taskfoundry.images.layer import tag_as_root
from taskfoundry.kinds.program.accept import judge
from taskfoundry.kinds.program.reference import REFERENCE_FAILS, ReferenceGrade, grade_reference
from taskfoundry.kinds.program.results import (
    CleanroomStage,
    FilterStage,
    GenerateStage,
    LintStage,
    OriginRow,
)
from taskfoundry.kinds.program.settings import PackageSettings
from taskfoundry.kinds.program.solution import compile_script, image_deps, image_env, solution_tarball
from taskfoundry.kinds.program.ub import undefined_behaviour
from taskfoundry.layout import REFERENCE_DIR
from taskfoundry.models import (
    Branch,
    DropRecord,
    IgnoredTest,
    Images,
    TaskStats,
    TaskYaml,
    TestsJson,
    branch_key,
    save_json,
    save_yaml,
)
from taskfoundry.naming import grading_image
from taskfoundry.pipeline.difficulty import code_lines, difficulty
from taskfoundry.pipeline.provenance import Provenance, StageTimes, provenance
from taskfoundry.pipeline.results import BuildStage, SourceResult

log = logging.getLogger(__name__)


def reference_solution(src: SourceResult, build: BuildStage, client: docker.DockerClient) -> bytes:
    """The submission that scores 1.0: the pinned tree, its vendored dependencies, compile.sh."""
    script = compile_script(build.build_sh, image_env(client, build.image))
    return solution_tarball(src.path, script, image_deps(client, build.image))


def package_stage(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    gen: GenerateStage,
    lint: LintStage,
    filt: FilterStage,
    settings: PackageSettings,
    client: docker.DockerClient,
    times: StageTimes,
) -> Path:
    """Write <out>/tasks/<task id>/ in one rename; returns its path."""
    names = settings.names(src)
    images = names.images
    tag_alias(client, build.image, images.task)
    tag_alias(client, clean.image, images.task_cleanroom)
    tag_as_root(client, clean.image, grading_image(images), hide=(REFERENCE_DIR,))
    solution = reference_solution(src, build, client)
    key = branch_key(gen.branch)
    suite = suite_tarball(gen.suite)
    made = provenance(names.task_dir, src.commit, times)
    meta = _Meta(src, build, clean, gen, made, images, submission_digest(solution))
    reference = None
    if settings.grade_reference:
        filt, reference = _checked_by_reference(meta, filt, key, suite, solution, settings, client)
    task = _task_yaml(meta, filt)
    task = task.model_copy(
        update={"grade": judge(task.stats, reference is not None, settings.dummies, settings.accept)}
    )
    ignored = [IgnoredTest(name=n, reasons=r) for n, r in sorted(filt.dropped.items())]
    branch = Branch(
        tests=filt.kept,
        ignored_tests=ignored,
        ignored=filt.branch_error is not None,
        ignore_reason=filt.branch_error,
    )
    tests = TestsJson(branches={key: branch})
    final = names.task_dir
    with atomic.staged_dir(final) as tmp:
        save_yaml(tmp / "task.yaml", task)
        save_json(tmp / "tests.json", tests)
        atomic.write_text(tmp / "build.sh", build.build_sh)
        atomic.write_bytes(tmp / "tests" / f"{key}.tar.gz", suite)
        atomic.write_bytes(tmp / "solution.tar.gz", solution)
        _reports(tmp / "reports", build, gen, lint, filt, clean)
        if filt.no_logic is not None:
            save_json(tmp / "reports" / "replay.json", filt.no_logic)
        if reference is not None:
            atomic.write_json(tmp / "reports" / "reference.json", reference.report())
        if gen.seed is not None:  # hidden with the reports: never in the cleanroom or task.yaml
            atomic.write_json(tmp / "reports" / "secret.json", {"explorer_seed": gen.seed})
        logs = names.generate_dir
        if logs.is_dir():  # probe logs, agent trajectories
            shutil.copytree(logs, tmp / "reports" / "generation")
    return final


@dataclass(frozen=True)
class _Meta:
    """What task.yaml says besides the filter's verdict."""

    src: SourceResult
    build: BuildStage
    clean: CleanroomStage
    gen: GenerateStage
    made: Provenance
    images: Images
    reference_digest: str


def _task_yaml(meta: _Meta, filt: FilterStage) -> TaskYaml:
    src, build, gen = meta.src, meta.build, meta.gen
    score, level = difficulty(code_lines(src.path), len(build.recipe.packages))
    dropped_by: dict[str, int] = {}
    for records in filt.dropped.values():
        dropped_by[records[0].id] = dropped_by.get(records[0].id, 0) + 1
    stats = TaskStats(
        tests_generated=gen.generated,
        tests_kept=len(filt.kept),
        dropped=dropped_by,
        line_rate=round(filt.coverage.line_rate, 4),
        lines_covered=filt.coverage.lines_covered,
        lines_total=filt.coverage.lines_total,
        dummy_pass_rate=round(filt.dummy_pass_rate, 4),
        mutation_score=filt.mutation.score if filt.mutation else None,
        stage_seconds=meta.made.stage_seconds,
        reused_stages=meta.made.reused_stages,
        recall_tests=len(filt.recall),
        recall_in_resolve=filt.recall_in_resolve,
        replay_pass_rate=filt.no_logic.replay_pass_rate if filt.no_logic else None,
        replay_pass_rate_before=filt.no_logic.replay_pass_rate_before if filt.no_logic else None,
    )
    return TaskYaml(
        repository=f"{src.owner}/{src.repo}",
        commit=src.commit,
        language=build.recipe.language,
        difficulty=level,
        eval_clean_hashes=[build.gold_sha256],
        task_id=src.task_id,
        difficulty_score=score,
        source=src.source,
        created_at=meta.made.created_at,
        executable=build.recipe.executable,
        images=meta.images,
        stats=stats,
        upstream=src.upstream,
        source_visible=bool(build.recipe.source_visible),
        gold_integrity=meta.clean.integrity.verdict if meta.clean.integrity else None,
        reference_digest=meta.reference_digest,
    )


def _checked_by_reference(
    meta: _Meta,
    filt: FilterStage,
    key: str,
    suite: bytes,
    solution: bytes,
    settings: PackageSettings,
    client: docker.DockerClient,
) -> tuple[FilterStage, ReferenceGrade]:
    """`filt` without the tests the reference submission fails through the real grader
    (dropped as `reference_fails`), and the grade; PackageError when the reference cannot
    build or passes none."""
    tests = TestsJson(branches={key: Branch(tests=filt.kept)})
    grade = grade_reference(_task_yaml(meta, filt), tests, {key: suite}, solution, settings.harness, client)
    if grade.error is not None:
        raise PackageError(f"the reference submission does not build: {grade.error}; not packaged")
    if not grade.passed:
        raise PackageError(f"the reference submission passed none of {len(filt.kept)} tests; not packaged")
    if grade.failed:
        log.warning("the reference fails %d of %d kept tests: dropped", len(grade.failed), len(filt.kept))
        build = meta.build
        found = undefined_behaviour(build.image, build.recipe, suite, sorted(grade.failed), client)
        grade = dataclasses.replace(grade, undefined=found)
    return without_reference_failures(filt, grade), grade


def without_reference_failures(filt: FilterStage, grade: ReferenceGrade) -> FilterStage:
    """`filt` with the tests the reference failed moved to dropped, reason `reference_fails`."""
    if not grade.failed:
        return filt
    now = datetime.now(UTC)
    dropped = {k: list(v) for k, v in filt.dropped.items()}
    for name, status in grade.failed.items():
        detail = f"the reference submission, built by compile.sh and graded: {status}"
        if name in grade.undefined:  # the cause: the gold's own undefined behaviour on this call
            detail += f"; undefined behaviour in the gold (UBSan): {grade.undefined[name]}"
        dropped.setdefault(name, []).append(DropRecord(id=REFERENCE_FAILS, timestamp=now, detail=detail))
    kept = [n for n in filt.kept if n not in grade.failed]
    return filt.model_copy(update={"kept": kept, "dropped": dropped})


def _reports(
    reports: Path,
    build: BuildStage,
    gen: GenerateStage,
    lint: LintStage,
    filt: FilterStage,
    clean: CleanroomStage,
) -> None:
    save_json(reports / "coverage.json", filt.coverage)
    save_json(reports / "coverage_generated.json", gen.coverage)
    save_json(reports / "leak.json", clean.leak)
    save_json(reports / "assets.json", clean.assets)
    if clean.docs_left_out:
        atomic.write_json(reports / "docs_left_out.json", clean.docs_left_out)
    if clean.integrity is not None:
        save_json(reports / "integrity.json", clean.integrity)
    if filt.mutation is not None:
        save_json(reports / "mutation.json", filt.mutation)
    atomic.write_json(
        reports / "images.json",
        {
            "task": build.image,
            "task_built": build.built,
            "base": build.base_image,
            "toolchain": build.runtime_image,
            "cleanroom": clean.image,
            "cleanroom_built": clean.built,
            "build_log": str(build.log),
        },
    )
    atomic.write_json(reports / "lint.json", lint.report)
    atomic.write_json(
        reports / "filter.json",
        {
            "kept": filt.kept,
            "dummy_pass_rate": filt.dummy_pass_rate,
            "dropped": {k: [r.model_dump(mode="json") for r in v] for k, v in filt.dropped.items()},
        },
    )
    atomic.write_json(
        reports / "generate.json",
        {
            "branch": gen.branch,
            "generated": gen.generated,
            "probes_run": gen.probes_run,
            "exhausted": gen.exhausted,
            "not_kept": gen.not_kept,
            "seconds": gen.explorer_seconds,
            "harvest": gen.harvest.model_dump(mode="json") if gen.harvest else None,
            "origins": {k: v.model_dump() for k, v in origin_table(gen, filt).items()},
        },
    )


def origin_table(gen: GenerateStage, filt: FilterStage) -> dict[str, OriginRow]:
    """Per origin: probes run, tests written and the lines they reached first (the explorer's
    counts), then the tests the filter and the guided step kept, and the mutants whose first
    failing test is theirs."""
    table = {k: OriginRow(**v.model_dump()) for k, v in gen.origins.items()}

    def row(test: str) -> OriginRow:
        return table.setdefault(gen.test_origins.get(test, "unknown"), OriginRow())

    for test in filt.kept:
        row(test).tests_kept += 1
    for record in filt.mutation.records if filt.mutation else []:
        if record.status == "killed" and record.killed_by:
            row(record.killed_by).kills += 1
    return table
