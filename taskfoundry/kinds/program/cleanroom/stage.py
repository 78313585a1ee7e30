"""The cleanroom stage: the task's start state as its own image, then a leak scan of it.

The program's help text is captured here, once: the cleanroom ships it as docs, and the
generators and the filter's usage dummies read it from this stage's result.
"""

from __future__ import annotations

import logging

import docker

from taskfoundry.builders.build import GOLD
from taskfoundry.errors import LeakError
from taskfoundry.images.build import layers_key
from taskfoundry.kinds.program.cleanroom import leakscan, runtime, shingles
from taskfoundry.kinds.program.cleanroom.assets import select_assets
from taskfoundry.kinds.program.cleanroom.called_as import called_as
from taskfoundry.kinds.program.cleanroom.docs import collect_docs, reference_note, usage_docs
from taskfoundry.kinds.program.cleanroom.elf import linkage
from taskfoundry.kinds.program.cleanroom.image import build_cleanroom, layer_roots
from taskfoundry.kinds.program.cleanroom.integrity import check_integrity
from taskfoundry.kinds.program.cleanroom.leakscan import LeakScanConfig
from taskfoundry.kinds.program.results import CleanroomStage
from taskfoundry.kinds.program.settings import CleanroomSettings
from taskfoundry.kinds.program.testgen.help import capture_usage
from taskfoundry.kinds.program.testgen.probes import install_runner
from taskfoundry.layout import REFERENCE_EXECUTABLE, WORKSPACE
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.pipeline.settings import PROBE_LIMITS
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)


def cleanroom_stage(
    src: SourceResult, build: BuildStage, settings: CleanroomSettings, client: docker.DockerClient
) -> CleanroomStage:
    names = settings.names(src)
    with DockerSandbox(build.image, PROBE_LIMITS, client=client) as box:
        install_runner(box)
        argv0 = called_as(box, GOLD, build.program, settings.usage_timeout)
        usage = capture_usage(box, GOLD, settings.usage_timeout, argv0)
        gold = box.get_file(GOLD)
        data = _runtime_data(box)
    index = shingles.build_index(src.path, LeakScanConfig().shingle_tokens)
    own, left_out = without_leaks(collect_docs(src.path), index)
    docs = {
        **own,
        **usage_docs(usage, build.program),
        **reference_note(REFERENCE_EXECUTABLE, argv0),
    }
    kept, files = select_assets(src.path)
    visible = build.recipe.source_visible
    tag, built = build_cleanroom(
        client,
        build.runtime_image,
        gold,
        docs,
        names.cleanroom_dir,
        names.cleanroom_repo,
        source_visible=visible,
        assets=files,
        runtime_data=runtime.runtime_tar(data) if data else None,
    )
    # the base's directories are listed once per base file system, not walked in every cleanroom
    base_key = layers_key(client, build.runtime_image)
    pristine = leakscan.Pristine(layer_roots(data), settings.listing_dir / f"{base_key}.json")
    with DockerSandbox(tag, SandboxLimits(), client=client) as box:
        leak = leakscan.scan(
            box,
            tag,
            build.gold_sha256,
            source=src.path,
            gold_readable=visible,
            allowed={**kept.allowed(WORKSPACE), **runtime.allowed(data)},
            pristine=pristine,
            index=index,
        )
    integrity = check_integrity(client, tag, linkage(gold), source_visible=visible)
    if integrity.verdict == "instrumentable":
        log.warning(
            "%s: the gold (%s) can be instrumented by the worker: %s",
            src.task_id,
            integrity.linkage,
            ", ".join(integrity.succeeded()),
        )
    return CleanroomStage(
        image=tag,
        built=built,
        usage=usage,
        leak=leak,
        assets=kept,
        integrity=integrity,
        docs_left_out=left_out,
        argv0=argv0,
    )


def without_leaks(docs: dict[str, str], index: shingles.SourceIndex) -> tuple[dict[str, str], dict[str, str]]:
    """The tree's docs less those the leak scan would find source in, and why each went: avfs's
    doc/api-overview quotes its structs, which failed the whole task; a worker's docs say how
    the program is used, not how it is written."""
    texts = {path: text.encode() for path, text in docs.items()}
    findings = leakscan.text_findings(texts, index, LeakScanConfig().max_parse_error_ratio)
    why = {f.path: f"{f.kind}: {f.evidence}" for f in reversed(findings)}
    if why:
        log.warning("docs left out, they hold source: %s", ", ".join(sorted(why)))
    return {p: t for p, t in docs.items() if p not in why}, why


def _runtime_data(box: DockerSandbox) -> dict[str, bytes]:
    try:
        return runtime.runtime_files(box.get_file(runtime.RUNTIME_TAR))
    except FileNotFoundError:
        return {}  # nothing staged: not a C build, or its install failed (see /task/stage.log)


def start_state(
    src: SourceResult, build: BuildStage, settings: CleanroomSettings, client: docker.DockerClient
) -> CleanroomStage:
    """The stage as the flow runs it: a leaky image is an error, never a start state."""
    clean = cleanroom_stage(src, build, settings, client)
    require_clean(clean, settings.integrity)
    return clean


def require_clean(clean: CleanroomStage, integrity: str = "record") -> None:
    if clean.leak.verdict != "clean":
        kinds = sorted({f.kind for f in clean.leak.findings})
        where = ", ".join(f"{f.path} ({f.kind})" for f in clean.leak.findings[:5])
        more = f" and {len(clean.leak.findings) - 5} more" if len(clean.leak.findings) > 5 else ""
        raise LeakError(
            f"leak scan found {len(clean.leak.findings)} leaks ({', '.join(kinds)}) in {clean.image}: "
            f"{where}{more}",
        )
    sealed = clean.integrity
    if integrity == "require" and sealed is not None and sealed.verdict == "instrumentable":
        raise LeakError(
            f"the gold in {clean.image} is instrumentable ({sealed.linkage}): "
            f"{', '.join(sealed.succeeded())} (cleanroom.integrity: require)"
        )
