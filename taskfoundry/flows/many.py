"""Build many: fan out over sources with `.map()`, one row per source, a failure budget.

Sources in flight are bounded by the batch's task runner (`orchestration.concurrency`
threads); Docker image builds and model-driven generation by Prefect global
concurrency limits shared by every run on the server (`taskfoundry.flows.limits`).
One failed source is a `failed` row and the others go on; once more sources fail
than `orchestration.max_failures` allows, sources not yet started are cancelled and
the run ends with `FailureBudgetExceeded` (its summary published first).
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefect import flow, tags, task, unmapped
from prefect.client.schemas.objects import FlowRun
from prefect.futures import PrefectFuture, as_completed
from prefect.runtime import flow_run as current_run
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner
from prefect.tasks import Task
from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_attempt

from taskfoundry import atomic, progress
from taskfoundry.catalog import Catalog
from taskfoundry.config import Config
from taskfoundry.errors import ConfigError
from taskfoundry.flows import liveness, names
from taskfoundry.flows.artifacts import ProgressArtifact, publish_catalog, publish_summary
from taskfoundry.flows.build import build_flow
from taskfoundry.flows.index import INDEX, record
from taskfoundry.flows.limits import ensure_limits
from taskfoundry.flows.report import failure_text
from taskfoundry.flows.summary import FailureBudgetExceeded, RunRow, RunSummary, over_budget
from taskfoundry.models import TaskYaml, load_yaml_model
from taskfoundry.store import Store

log = logging.getLogger(__name__)


def built_row(source: str, task_dirs: list[Path], seconds: float) -> RunRow:
    """A source's row: its first task's id and figures (the program kind has one), the count
    of tasks it gave and the tests kept over all of them."""
    if not task_dirs:
        return RunRow(source=source, status="built", tasks=0, tests_kept=0, seconds=round(seconds, 2))
    tasks = [load_yaml_model(d / "task.yaml", TaskYaml) for d in task_dirs]
    return RunRow(
        source=source,
        status="built",
        task_id=tasks[0].task_id,
        task_dir=task_dirs[0],
        tasks=len(tasks),
        commit=tasks[0].commit,
        tests_kept=sum(t.stats.tests_kept for t in tasks),
        below_gate=sum(t.grade is not None and not t.grade.benchmark_grade for t in tasks),
        line_rate=tasks[0].stats.line_rate,
        seconds=round(seconds, 2),
    )


def failed_row(source: str, exc: BaseException, start: float) -> RunRow:
    row = RunRow.failure(source, exc, time.monotonic() - start)
    log.warning("%s: %s", source, failure_text(row))
    progress.source_done(source, False, f"{row.stage} stage failed" if row.stage else "failed")
    return row


@task(name="build-source", task_run_name="build {item}")
def build_one(item: str, config: Config) -> RunRow:
    """The per-source boundary: whatever goes wrong becomes this source's error row."""
    if config.orchestration.deployment is not None:
        return dispatched(item, config)
    return build_here(item, config)


def build_here(source: str, config: Config) -> RunRow:
    """Build `source` in this process; its row."""
    start = time.monotonic()
    try:
        task_dirs = build_flow(source, config)
    except Exception as exc:  # noqa: BLE001 - one failed source must not end the batch
        return failed_row(source, exc, start)
    row = built_row(source, task_dirs, time.monotonic() - start)
    progress.source_done(source, True, f"{row.tests_kept} tests kept{_reused(task_dirs)}")
    return row


def _reused(task_dirs: list[Path]) -> str:
    """What a re-run took from the cache, as its first task.yaml says."""
    if not task_dirs:
        return ""
    stages = load_yaml_model(task_dirs[0] / "task.yaml", TaskYaml).stats.reused_stages
    return f"; reused from the cache: {', '.join(stages)}" if stages else ""


def _row_key(flow_run_id: object) -> tuple[str, str, str]:
    return ("runs", "rows", f"{flow_run_id}.json")


@flow(name="build-source", flow_run_name=names.build_name, log_prints=False)
def build_source_flow(source: str, config: Config) -> RunRow:
    """One source of a batch as a flow run of its own, on whichever worker takes it: its row,
    also put in the object store for the batch that dispatched it (`dispatched`)."""
    with tags(*liveness.watched(current_run.tags)):  # a dead machine's build-task run is crashed too
        row = build_here(source, config)
    if config.store is not None:
        Store.at(config.store).put_bytes(row.model_dump_json().encode(), *_row_key(current_run.id))
    return row


def _crashed(run: FlowRun) -> bool:
    return run.state is not None and run.state.is_crashed()


def _why(run: FlowRun) -> str:
    if run.state is None:
        return f"flow run {run.name} lost"
    return f"flow run {run.name} {run.state.name}: {run.state.message or ''}"


def _last(attempt: RetryCallState) -> Any:
    """The last attempt's result, once retries are spent (tenacity would raise RetryError)."""
    assert attempt.outcome is not None
    return attempt.outcome.result()


def dispatched(source: str, config: Config) -> RunRow:
    """Run `source` as a flow run of `orchestration.deployment` and wait for it; a crashed run (its
    process died, or its worker with it: then the `liveness` automation crashes it once its
    heartbeats stop) is run again up to `source_retries` times, then it is a failed row naming why."""
    from prefect.deployments import run_deployment

    start = time.monotonic()
    orch = config.orchestration
    assert config.store is not None  # run_batch refuses a deployment without a store
    store = Store.at(config.store)
    # the URL, not this machine's folder: each worker builds in a folder of its own
    params = {
        "source": source,
        "config": {**config.model_dump(mode="json", exclude={"store"}), "out": store.url},
    }
    crashes: list[str] = []

    def crashed(attempt: RetryCallState) -> None:
        assert attempt.outcome is not None
        crashes.append(_why(attempt.outcome.result()))
        log.warning("%s: %s (attempt %d, run again)", source, crashes[-1], attempt.attempt_number)

    retrying = Retrying(
        stop=stop_after_attempt(orch.source_retries + 1),
        retry=retry_if_result(_crashed),
        before_sleep=crashed,
        retry_error_callback=_last,
    )
    run: FlowRun = retrying(  # type: ignore[assignment] # run_deployment's sync form, in a thread
        run_deployment,
        str(orch.deployment),
        parameters=params,
        poll_interval=2,
        as_subflow=True,
        tags=[liveness.tag(orch.heartbeat_seconds)],
        job_variables=liveness.job_variables(orch.heartbeat_seconds),
    )
    if run.state is not None and run.state.is_completed():
        data = store.get_bytes(*_row_key(run.id))
        if data is not None:
            return RunRow.model_validate_json(data)
        why = f"flow run {run.name} completed but put no row in {store.url}"
    else:
        why = _why(run)
    error = "; ".join([*crashes, why])  # every attempt's reason, the last one last
    row = RunRow(source=source, status="failed", error=error, seconds=round(time.monotonic() - start, 2))
    progress.source_done(source, False, "flow run failed")
    return row


def _cancel(futures: Sequence[PrefectFuture[Any]]) -> None:
    for future in futures:
        cancel = getattr(getattr(future, "wrapped_future", None), "cancel", None)
        if cancel is not None:
            cancel()  # only sources not started yet; running ones finish


def _row_of(future: PrefectFuture[Any], label: str) -> RunRow:
    try:
        row: RunRow = future.result()
        return row
    except concurrent.futures.CancelledError:
        return RunRow(source=label, status="cancelled", error="not started: failure budget exceeded")
    except Exception as exc:  # noqa: BLE001 - a crashed task run is still one source's row
        return RunRow.failure(label, exc, 0.0)


def batch_runner(config: Config) -> TaskRunner[Any]:
    """Threads here, `concurrency` at a time; or a Dask cluster's workers (prefect-dask)."""
    orch = config.orchestration
    if orch.dask_address is None:
        return ThreadPoolTaskRunner(max_workers=orch.concurrency)
    try:
        from prefect_dask import DaskTaskRunner  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ConfigError("orchestration.dask_address needs prefect-dask (pip install prefect-dask)") from exc
    runner: TaskRunner[Any] = DaskTaskRunner(address=orch.dask_address)
    return runner


def run_batch(
    name: str, fn: Task[..., Any], items: Sequence[Any], labels: Sequence[str], config: Config
) -> RunSummary:
    """Map `fn(item=..., config=...)` over `items`; collect rows in input order; enforce the budget."""
    orch = config.orchestration
    if orch.deployment is not None and config.store is None:
        raise ConfigError("orchestration.deployment needs an object store out (s3://bucket/prefix)")
    ensure_limits(config)
    if orch.deployment is not None:
        liveness.ensure_watch(orch.heartbeat_seconds)
    summary = RunSummary(flow=name, max_failures=orch.max_failures)
    start = time.monotonic()
    progress.batch_started(len(items))
    bar = ProgressArtifact(name, len(items))
    rows: dict[int, RunRow] = {}
    if not items:
        log.warning("%s: no sources", name)
        finish(summary, config)
        return summary
    with batch_runner(config) as runner:
        futures: list[PrefectFuture[Any]] = list(
            runner.map(fn, {"item": list(items), "config": unmapped(config)})
        )
        where = {future.task_run_id: i for i, future in enumerate(futures)}
        for future in as_completed(futures):
            i = where[future.task_run_id]
            rows[i] = _row_of(future, labels[i])
            bar.advance()
            failures = sum(r.status == "failed" for r in rows.values())
            if not summary.budget_exceeded and over_budget(failures, orch.max_failures, len(items)):
                summary.budget_exceeded = True
                _cancel(futures)
    summary.rows = [rows[i] for i in range(len(items))]
    summary.seconds = round(time.monotonic() - start, 2)
    finish(summary, config)
    return summary


def finish(summary: RunSummary, config: Config) -> None:
    """Publish the run summary and the catalog, keep a copy under <out>/runs/, and fail past
    the budget."""
    publish_summary(summary)
    store = Store.at(config.store) if config.store is not None else None
    if store is not None:  # every worker's tasks, not only this one's
        store.mirror(config.out)
    record(config.out, summary.rows)
    if config.tasks_dir.is_dir():
        publish_catalog(Catalog.load(config.out), where=config.store or str(config.out))
    stamp = summary.started_at.strftime("%Y%m%dT%H%M%S")
    name = f"{summary.flow}-{stamp}-{current_run.name or 'local'}.json"  # the dashboard's run name
    atomic.write_json(config.out / "runs" / name, summary.model_dump(mode="json"))
    if store is not None:
        store.put_bytes((config.out / INDEX).read_bytes(), INDEX)
        store.put_bytes((config.out / "runs" / name).read_bytes(), "runs", name)
    if summary.budget_exceeded:
        raise FailureBudgetExceeded(summary)


@flow(name="build-many", flow_run_name=names.build_many_name, log_prints=False)
def build_many_flow(sources: list[str], config: Config) -> RunSummary:
    """Build every source (duplicates once), `config.orchestration.concurrency` at a time."""
    unique = list(dict.fromkeys(sources))
    return run_batch("build-many", build_one, unique, unique, config)
