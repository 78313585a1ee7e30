"""start_state of the function kind: the functions of the source, their dependency class and
testability (stages 1-3, static), and the sandbox image the later stages run them in."""

from __future__ import annotations

import logging

import docker

from taskfoundry.images.base import ensure_base_image
from taskfoundry.kinds.function.env import ensure_env_image
from taskfoundry.kinds.function.extract import examine, functions, project_packages, python_files, read_module
from taskfoundry.kinds.function.results import Candidate, FunctionRecord, FunctionsStage
from taskfoundry.kinds.function.settings import FunctionConfig, FunctionsSettings
from taskfoundry.pipeline.results import BuildStage, SourceResult

log = logging.getLogger(__name__)


def module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def find_candidates(src: SourceResult, cfg: FunctionConfig) -> tuple[list[FunctionRecord], list[Candidate]]:
    repo = src.path
    project = project_packages(repo)
    allowed = set(cfg.allowed_libraries)
    bounds = (cfg.min_complexity, cfg.max_complexity)
    records: list[FunctionRecord] = []
    candidates: list[Candidate] = []
    for path in python_files(repo):
        info = read_module(path, repo)
        if info is None:
            continue
        prefix = module_name(info.rel)
        for qualname, node, is_method in functions(info):
            record, candidate = examine(
                info, f"{prefix}.{qualname}", node, is_method, project, allowed, bounds
            )
            records.append(record)
            if candidate is not None:
                candidates.append(candidate)
    return records, candidates


def functions_stage(
    src: SourceResult, build: BuildStage | None, settings: FunctionsSettings, client: docker.DockerClient
) -> FunctionsStage:
    """`build` is not read: the function kind needs no build of the program."""
    records, candidates = find_candidates(src, settings.function)
    libraries = sorted({lib for c in candidates for lib in c.record.libraries})
    base = ensure_base_image(settings.base, client)
    image, built = ensure_env_image(client, base, libraries, settings.namespace, settings.names(src).work_dir)
    log.info("%s: %d functions, %d candidates", src.task_id, len(records), len(candidates))
    return FunctionsStage(
        image=image, built=built, records=records, candidates=candidates, libraries=libraries
    )
