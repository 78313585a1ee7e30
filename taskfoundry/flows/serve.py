"""`taskfoundry serve`: the flows as deployments of one long-lived process (`prefect.serve`).

refresh runs on the cron schedule of `orchestration.refresh`; build-task,
build-many and evaluate are there to be run from the dashboard or with
`prefect deployment run`. Every deployment gets the serving config as its default
`config` parameter, so a run started from the UI builds into the same output dir.
"""

from __future__ import annotations

from typing import Any, cast

from prefect import Flow, serve
from prefect.deployments.runner import RunnerDeployment
from prefect.schedules import Cron

from taskfoundry.config import Config
from taskfoundry.flows.build import build_flow
from taskfoundry.flows.evaluate import evaluate_flow
from taskfoundry.flows.many import build_many_flow
from taskfoundry.flows.refresh import refresh_flow


def _deployment(flow: Flow[..., Any], name: str, **options: Any) -> RunnerDeployment:
    return cast(RunnerDeployment, flow.to_deployment(name=name, **options))


def deployments(config: Config) -> list[RunnerDeployment]:
    refresh = config.orchestration.refresh
    params: dict[str, Any] = {"config": config.model_dump(mode="json")}
    cron = Cron(refresh.cron, timezone=refresh.timezone)
    return [
        _deployment(
            refresh_flow,
            "refresh",
            schedules=[cron],
            parameters=params,
            description="build the catalog's new candidates",
        ),
        _deployment(build_flow, "build", parameters=params, description="build one task"),
        _deployment(
            build_many_flow, "build-many", parameters=params, description="build many sources, concurrently"
        ),
        _deployment(evaluate_flow, "evaluate", description="grade a run directory"),
    ]


def serve_all(config: Config, limit: int | None = None) -> None:
    """Block, serving every deployment, until interrupted."""
    serve(*deployments(config), limit=limit, print_starting_message=False)
