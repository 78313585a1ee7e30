"""Resume by content: persisted stage results, their cache key, and checks before trusting one.

A stage's cache key hashes its inputs (its own config section and the results of the
stages it takes, without their `built` flag, which says whether that run made the
image), its code (the stage's module and every package module that one imports, and the
same for every stage before it, so an edit re-runs that stage and the ones after it),
the source of the Prefect task that wraps it, and the taskfoundry version. Results are pickled
under `<out>/work/results/` (for an object store OUT, under its `work/results/`), so the same
command run again after a crash resumes after the last stage that finished. A cached result
can still point at something gone since: an image removed with `docker rmi`, a suite
directory deleted. `stale_reason` names such a loss, and the flow then runs the stage
again with `refresh_cache`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from prefect.cache_policies import TASK_SOURCE, CachePolicy
from prefect.context import TaskRunContext
from prefect.filesystems import RemoteFileSystem, WritableFileSystem
from prefect.settings import get_current_settings
from prefect.utilities.hashing import hash_objects
from pydantic import BaseModel

from taskfoundry.config import Config
from taskfoundry.flows.codegraph import code_hash
from taskfoundry.pipeline.results import Outside

RESULTS_DIR = "results"


def code_version() -> str:
    try:
        return version("taskfoundry")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown"


def _stable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        # `built` says whether that run made the image, not what the image is
        return value.model_dump(mode="json", exclude={"built"})
    return value


@dataclass
class StageInputs(CachePolicy):
    """Like Prefect's INPUTS, with the `built` flag of stage results left out."""

    def compute_key(
        self,
        task_ctx: TaskRunContext,
        inputs: dict[str, Any],
        flow_parameters: dict[str, Any],
        **kwargs: Any,
    ) -> str | None:
        if not inputs:
            return None
        stable = {name: _stable(value) for name, value in sorted(inputs.items())}
        root = shared_root(flow_parameters.get("config"))
        if root is not None:  # the same key on every worker, whatever its own folder
            try:
                stable = json.loads(json.dumps(stable).replace(str(root), "<out>"))
            except TypeError:  # an input JSON cannot hold: hashed as it is, this folder's key
                pass
        return hash_objects(stable, raise_on_failure=True)


def shared_root(config: object) -> Path | None:
    """The worker's local folder when results are shared through an object store, else None."""
    return config.out if isinstance(config, Config) and config.store is not None else None


@dataclass
class CodeVersion(CachePolicy):
    """The installed taskfoundry version: an upgrade invalidates every cached stage."""

    def compute_key(
        self,
        task_ctx: TaskRunContext,
        inputs: dict[str, Any],
        flow_parameters: dict[str, Any],
        **kwargs: Any,
    ) -> str | None:
        return hash_objects(code_version(), raise_on_failure=True)


@dataclass
class StageCode(CachePolicy):
    """The code a stage runs: `modules` (its own and those of the stages before it) and
    every package module they import (`codegraph.code_hash`)."""

    modules: tuple[str, ...] = ()

    def compute_key(
        self,
        task_ctx: TaskRunContext,
        inputs: dict[str, Any],
        flow_parameters: dict[str, Any],
        **kwargs: Any,
    ) -> str | None:
        return code_hash(self.modules)


def upto(pipeline: Sequence[str], stage: str) -> tuple[str, ...]:
    """The modules of `stage` and of the stages before it (`pipeline`: stage modules in run order)."""
    return tuple(pipeline[: pipeline.index(stage) + 1])


def stage_cache(pipeline: Sequence[str], stage: str) -> CachePolicy:
    """The cache policy of `stage`, a module of `pipeline`."""
    return StageInputs() + StageCode(modules=upto(pipeline, stage)) + TASK_SOURCE + CodeVersion()


def results_dir(config: Config) -> Path:
    return (config.work_dir / RESULTS_DIR).resolve()


def result_storage(config: Config) -> Path | WritableFileSystem:
    """Where stage results (and so the cache) live: under the run's own output directory, or
    under the object store's `work/results/` (one put a result), shared by every worker.

    A path, which Prefect turns into a local file system block; or an unsaved fsspec block."""
    if config.store is not None:
        return _store_block(f"{config.store}/work/{RESULTS_DIR}", str(get_current_settings().api.url))
    path = results_dir(config)
    path.mkdir(parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=16)
def _store_block(basepath: str, api_url: str) -> RemoteFileSystem:
    """The block for `basepath`, saved on the server at `api_url` (Prefect takes only saved
    blocks as result storage). It holds the URL only: credentials stay in the environment."""
    block = RemoteFileSystem(basepath=basepath)
    name = "taskfoundry-results-" + hashlib.sha256(basepath.encode()).hexdigest()[:16]
    block.save(name, overwrite=True)
    return block


@runtime_checkable
class PointsOutside(Protocol):
    """A stage result (of any kind) that names images or directories it does not hold."""

    def outside(self) -> Outside: ...


def stale_reason(result: object, image_exists: Callable[[str], bool], root: Path | None = None) -> str | None:
    """Why a cached stage result cannot be trusted any more, or None when it can. With `root`
    (this worker's folder, results shared through a store) a directory elsewhere is another
    worker's: not this one's to read."""
    if isinstance(result, tuple):  # a part that hands on several results (strengthen)
        return next(filter(None, (stale_reason(r, image_exists, root) for r in result)), None)
    if not isinstance(result, PointsOutside):
        return None
    outside = result.outside()
    for image in outside.images:
        if not image_exists(image):
            return f"image {image} is gone"
    for path in outside.dirs:
        if root is not None and not path.is_relative_to(root):
            return f"{path} is in another worker's folder"
        if not path.is_dir():
            return f"{path} is gone"
    return None
