"""The source stage: a SOURCE string to a pinned checkout (never cached: a path or a branch
names new commits over time, and the commit is in every later key)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from taskfoundry.models import UpstreamInfo
from taskfoundry.pipeline.results import SourceResult
from taskfoundry.sources import Checkout, SourceConfig, resolve_source
from taskfoundry.sources.checkout import Upstream


def source_stage(source: str, sources: SourceConfig, work_dir: Path) -> SourceResult:
    co = resolve_source(source, work_dir, sources)
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


def checkout_of(src: SourceResult) -> Checkout:
    """The checkout a persisted source result names (the builders take a `Checkout`)."""
    upstream = (
        Upstream(
            **{
                **src.upstream.model_dump(),
                "build_depends": tuple(src.upstream.build_depends),
                "programs": tuple(src.upstream.programs),
            }
        )
        if src.upstream
        else None
    )
    return Checkout(src.path, src.owner, src.repo, src.commit, src.source, upstream)
