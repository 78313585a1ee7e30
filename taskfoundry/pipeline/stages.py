"""Stage functions: source -> build -> cleanroom -> generate -> lint -> filter (-> package)."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import docker

from taskfoundry import atomic
from taskfoundry.agent.config import make_model
from taskfoundry.builders.agent import BuildAgent, resolve_recipe
from taskfoundry.builders.build import GOLD, run_build
from taskfoundry.cleanroom import leakscan, runtime
from taskfoundry.cleanroom.assets import select_assets
from taskfoundry.cleanroom.docs import collect_docs, usage_docs
from taskfoundry.cleanroom.image import WORKSPACE, build_cleanroom
from taskfoundry.config import Config
from taskfoundry.errors import SandboxError, StageError
from taskfoundry.filtering.filter import Grader, final_check, run_filter
from taskfoundry.images.base import ensure_base_image
from taskfoundry.models import CoverageReport, DropRecord, UpstreamInfo
from taskfoundry.pipeline.results import (
    BuildStage,
    CleanroomStage,
    FilterStage,
    GenerateStage,
    LintStage,
    SourceResult,
)
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.sources import Checkout, resolve_source
from taskfoundry.sources.checkout import Upstream
from taskfoundry.testgen.base import GenerationContext, make_generator
from taskfoundry.testgen.explorer import capture_usage
from taskfoundry.testgen.thirdparty import third_party_prefixes

log = logging.getLogger(__name__)
PROBE_LIMITS = SandboxLimits(memory_mb=2048, pids=512, output_bytes=512 * 1024 * 1024)


def source_stage(source: str, config: Config) -> SourceResult:
    co = resolve_source(source, config.work_dir, config.sources)
    upstream = UpstreamInfo(**dataclasses.asdict(co.upstream)) if co.upstream else None
    return SourceResult(
        path=co.path,
        owner=co.owner,
        repo=co.repo,
        commit=co.commit,
        source=co.source,
        task_id=co.task_id,
        upstream=upstream,
    )


def _build_agent(config: Config) -> BuildAgent | None:
    model = config.build_agent.model
    return BuildAgent(make_model(model, os.environ), config.build_agent) if model else None


def build_stage(src: SourceResult, config: Config, client: docker.DockerClient) -> BuildStage:
    upstream = Upstream(**src.upstream.model_dump()) if src.upstream else None
    co = Checkout(src.path, src.owner, src.repo, src.commit, src.source, upstream)
    base = ensure_base_image(config.base, client)
    recipe = resolve_recipe(co, config.executable, base, client, config.work_dir, _build_agent(config))
    res = run_build(co, recipe, base, config.work_dir, client, config.namespace)
    with DockerSandbox(res.image, PROBE_LIMITS, client=client) as box:
        gold = box.get_file(GOLD)
    return BuildStage(
        base_image=base,
        image=res.image,
        built=res.built,
        recipe=recipe,
        build_sh=res.build_sh,
        gold_sha256=hashlib.sha256(gold).hexdigest(),
        log=res.log,
        toolchain_image=res.toolchain,
    )


def program_name(build: BuildStage) -> str:
    return Path(build.recipe.executable).name


def cleanroom_stage(
    src: SourceResult, build: BuildStage, config: Config, client: docker.DockerClient
) -> CleanroomStage:
    with DockerSandbox(build.image, PROBE_LIMITS, client=client) as box:
        from taskfoundry.testgen.probes import install_runner

        install_runner(box)
        usage = capture_usage(box, GOLD, config.explorer.probe_timeout)
        gold = box.get_file(GOLD)
        data = _runtime_data(box)
    docs = {**collect_docs(src.path), **usage_docs(usage, program_name(build))}
    kept, files = select_assets(src.path)
    workdir = config.work_dir / "cleanroom" / src.task_id
    repo = f"{config.namespace}/cleanroom-{src.owner}_1776_{src.repo}"
    visible = build.recipe.source_visible
    tag, built = build_cleanroom(
        client,
        build.runtime_image,
        gold,
        docs,
        workdir,
        repo,
        source_visible=visible,
        assets=files,
        runtime_data=runtime.runtime_tar(data) if data else None,
    )
    with DockerSandbox(tag, SandboxLimits(), client=client) as box:
        leak = leakscan.scan(
            box,
            tag,
            build.gold_sha256,
            source=src.path,
            gold_readable=visible,
            allowed={**kept.allowed(WORKSPACE), **runtime.allowed(data)},
        )
    return CleanroomStage(image=tag, built=built, usage=usage, leak=leak, assets=kept)


def _runtime_data(box: DockerSandbox) -> dict[str, bytes]:
    try:
        return runtime.runtime_files(box.get_file(runtime.RUNTIME_TAR))
    except FileNotFoundError:
        return {}  # nothing staged: not a C build, or its install failed (see /task/stage.log)


def _go_module(repo: Path) -> str:
    gomod = repo / "go.mod"
    match = re.search(r"^module\s+(\S+)", gomod.read_text(), re.M) if gomod.exists() else None
    return match.group(1) if match else ""


def generate_stage(
    src: SourceResult, build: BuildStage, config: Config, client: docker.DockerClient
) -> GenerateStage:
    generator = make_generator(config.generator)
    with DockerSandbox(build.image, PROBE_LIMITS, client=client) as box:
        ctx = GenerationContext(
            sandbox=box,
            repo=src.path,
            program=program_name(build),
            recipe=build.recipe,
            go_module=_go_module(src.path),
            log_dir=config.work_dir / "generate" / src.task_id,
            config=config,
            exclude=third_party_prefixes(src.path),
        )
        branch = generator.generate(ctx)
    suite = config.work_dir / "suites" / src.task_id / branch.name
    write_suite(suite, branch.files)
    return GenerateStage(
        branch=branch.name,
        suite=suite,
        tests=branch.tests,
        generated=len(branch.tests),
        probes_run=branch.probes_run,
        exhausted=branch.exhausted,
        coverage=CoverageReport.from_lines(branch.covered, branch.total),
        per_test_lines=branch.per_test_lines,
        explorer_seconds=branch.seconds,
    )


def write_suite(suite: Path, files: dict[str, str]) -> None:
    """eval/run.sh + eval/tests/tfrun.py + eval/tests/test_*.py, replacing any old suite."""
    with atomic.staged_dir(suite) as tmp:
        tests = tmp / "eval" / "tests"
        tests.mkdir(parents=True)
        assets = resources.files("taskfoundry.assets")
        (tmp / "eval" / "run.sh").write_bytes(assets.joinpath("run.sh").read_bytes())
        (tmp / "eval" / "run.sh").chmod(0o755)
        (tests / "tfrun.py").write_bytes(assets.joinpath("tfrun.py").read_bytes())
        for name, text in files.items():
            (tests / name).write_text(text)


def lint_stage(gen: GenerateStage) -> LintStage:
    from taskfoundry.linters import lint_paths

    result = lint_paths([gen.suite / "eval" / "tests"])
    now = datetime.now(UTC)
    dropped: dict[str, list[DropRecord]] = {}
    for finding in result.findings:
        if finding.severity != "HIGH":
            continue
        name = f"eval.tests.{Path(finding.path).stem}.{finding.test.replace('::', '.')}"
        dropped.setdefault(name, []).append(
            DropRecord(id="lint_high", timestamp=now, detail=f"{finding.rule}: {finding.message}")
        )
    high = sum(f.severity == "HIGH" for f in result.findings)
    return LintStage(dropped=dropped, findings=len(result.findings), high=high, report=result.to_json())


def filter_stage(
    gen: GenerateStage,
    lint: LintStage,
    clean: CleanroomStage,
    config: Config,
    client: docker.DockerClient,
) -> FilterStage:
    usage = clean.usage.get("", "")
    total = {f: set(c.covered) | set(c.missed) for f, c in gen.coverage.files.items()}
    try:
        grader = Grader.load(client, clean.image, gen.suite, config.eval)
        res = run_filter(grader, gen.tests, usage, config.filter, lint.dropped)
    except SandboxError as exc:  # infrastructure, not a verdict: mark the branch, not its tests
        log.error("filter of %s failed: %s", gen.branch, exc)
        return FilterStage(
            kept=[],
            dropped=lint.dropped,
            dummy_pass_rate=0.0,
            coverage=CoverageReport.from_lines({}, total),
            branch_error=f"infrastructure failure in the filter: {exc}",
        )
    failed = final_check(grader, res.kept)
    if failed:
        raise StageError(
            "filter",
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
    )


def require_clean(clean: CleanroomStage) -> None:
    if clean.leak.verdict != "clean":
        kinds = sorted({f.kind for f in clean.leak.findings})
        raise StageError(
            "cleanroom",
            f"leak scan found {len(clean.leak.findings)} leaks ({', '.join(kinds)}) in {clean.image}",
        )
