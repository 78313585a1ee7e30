"""The generate stage: one branch of the hidden suite, written by the chosen generator."""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

import docker

from taskfoundry import atomic
from taskfoundry.assets import asset
from taskfoundry.assets.grading.tfrun import called_as
from taskfoundry.kinds.program.results import CleanroomStage, GenerateStage
from taskfoundry.kinds.program.settings import GenerateSettings, GeneratorSettings
from taskfoundry.kinds.program.testgen.base import GenerationContext, make_generator
from taskfoundry.kinds.program.testgen.harvest import harvest
from taskfoundry.kinds.program.testgen.replay_record import load_replay, record_replay
from taskfoundry.kinds.program.testgen.thirdparty import third_party_prefixes
from taskfoundry.layout import WORKSPACE, WORKSPACE_EXECUTABLE
from taskfoundry.models import CoverageReport
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.pipeline.settings import PROBE_LIMITS
from taskfoundry.sandbox.base import Sandbox, SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

REPLAY_SUFFIX = ".replay.json"  # the replay dummy's table, beside the suites
PUBLIC = "public"  # its name: drawn from public information only, whatever the branch
PROGRAM_JSON = "program.json"  # in eval/tests: assets/grading/tfrun.py reads it


def go_module(repo: Path) -> str:
    gomod = repo / "go.mod"
    match = re.search(r"^module\s+(\S+)", gomod.read_text(), re.M) if gomod.exists() else None
    return match.group(1) if match else ""


def generate_stage(
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    settings: GenerateSettings,
    client: docker.DockerClient,
) -> GenerateStage:
    names = settings.names(src)
    generator = make_generator(settings.generator.name)
    harvested, report = harvest(
        client, build.image, src.path, build.recipe, build.program, settings.generator.explorer.harvest
    )
    with (
        cleanroom_view(clean.image, client, settings.generator.explorer.no_logic) as view,
        DockerSandbox(build.image, PROBE_LIMITS, client=client) as box,
    ):
        ctx = generation_context(box, src, build, clean, settings.generator, names.generate_dir, view)
        # first, so the explorer keeps no test the filter's replay dummy passes; beside the
        # suites, not in the generate directory the task's reports copy (megabytes)
        replay = record_replay(ctx, settings.generator.explorer, names.suite_dir(PUBLIC + REPLAY_SUFFIX))
        table = load_replay(replay)
        branch = generator.generate(dataclasses.replace(ctx, harvested=tuple(harvested), replay=table))
    suite = names.suite_dir(branch.name)
    write_suite(suite, branch.files, clean.argv0)
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
        harvest=report,
        origins=branch.origins,
        test_origins=branch.test_origins,
        slow_timeout=branch.slow_timeout,
        seed=branch.seed,
        not_kept=branch.not_kept,
        replay=replay,
    )


def generation_context(
    box: Sandbox,
    src: SourceResult,
    build: BuildStage,
    clean: CleanroomStage,
    generator: GeneratorSettings,
    log_dir: Path,
    public_view: Path | None = None,
) -> GenerationContext:
    """What a generator may use, in `box` (a container of the build image)."""
    return GenerationContext(
        sandbox=box,
        repo=src.path,
        program=build.program,
        recipe=build.recipe,
        go_module=go_module(src.path),
        log_dir=log_dir,
        config=generator,
        usage=clean.usage,
        exclude=third_party_prefixes(src.path),
        argv0=clean.argv0,
        public_view=public_view,
    )


@contextmanager
def cleanroom_view(image: str, client: docker.DockerClient, wanted: bool = True) -> Iterator[Path | None]:
    """The cleanroom's workspace copied to the host: the docs and files a worker reads, which
    the public probes are drawn from as an attacker draws them (None when not `wanted`)."""
    if not wanted:
        yield None
        return
    with (
        tempfile.TemporaryDirectory(prefix="tf-view-") as tmp,
        DockerSandbox(image, SandboxLimits(), client=client) as box,
    ):
        view = Path(tmp) / "workspace"
        box.get_dir(WORKSPACE, view)
        yield view


def write_suite(suite: Path, files: dict[str, str], argv0: str = WORKSPACE_EXECUTABLE) -> None:
    """eval/run.sh + eval/tests/tfrun.py + eval/tests/test_*.py, replacing any old suite; and
    eval/tests/program.json where the program is called by a name of its own (`argv0`)."""
    with atomic.staged_dir(suite) as tmp:
        tests = tmp / "eval" / "tests"
        tests.mkdir(parents=True)
        (tmp / "eval" / "run.sh").write_bytes(asset("grading/run.sh"))
        (tmp / "eval" / "run.sh").chmod(0o755)
        (tests / "tfrun.py").write_bytes(asset("grading/tfrun.py"))
        if argv0 != WORKSPACE_EXECUTABLE:
            (tests / PROGRAM_JSON).write_text(json.dumps({"called_as": PurePosixPath(argv0).name}) + "\n")
        for name, text in files.items():
            (tests / name).write_text(text)


def suite_argv0(suite: Path) -> str:
    """What the suite at `suite` calls its program as (its eval/tests/program.json), read by
    tfrun's own `called_as`, so the grader and the build agree on a bad file too."""
    name = called_as(suite / "eval" / "tests" / PROGRAM_JSON)
    return f"{WORKSPACE}/{name}" if name else WORKSPACE_EXECUTABLE
