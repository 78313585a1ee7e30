"""Flow run names an author can read on the dashboard: what a run builds or grades, not
Prefect's random `meticulous-mantis`. Prefect calls these with no arguments, inside the run."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

WIDTH = 60


def short_source(source: str) -> str:
    """A source as a reader knows it: a registry name whole, a path or URL by its last part."""
    if ":" in source and "/" not in source:  # debian:figlet, crate:bat@0.24, pypi:attrs
        return source[:WIDTH]
    base, _, ref = source.partition("#")
    tail = base.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or base
    return (f"{tail}#{ref}" if ref else tail)[:WIDTH]


def _params() -> dict[str, Any]:
    from prefect.runtime import flow_run

    params: dict[str, Any] = flow_run.parameters
    return params


def build_name() -> str:
    return f"build {short_source(str(_params()['source']))}"


def build_resolved_name() -> str:
    return f"build {_params()['src'].task_id}"


def build_many_name() -> str:
    sources = [str(s) for s in _params()["sources"]]
    first = short_source(sources[0]) if sources else "nothing"
    more = f" and {len(sources) - 1} more" if len(sources) > 1 else ""
    return f"build-many {first}{more}"


def evaluate_name() -> str:
    return f"evaluate {Path(_params()['run_dir']).name}"


def agent_run_name() -> str:
    params = _params()
    return f"agent-run {Path(params['run_dir']).name}: {len(params['task_dirs'])} tasks"


def refresh_name() -> str:
    return f"refresh {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"


def catalog_name() -> str:
    return f"publish-catalog {Path(_params()['path']).name}"
