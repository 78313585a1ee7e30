"""solve_task: one agent run on one task, in the worker's view; the submission and the record
out in RUN_DIR/<task id>/ (submission.tar.gz, trajectory.json, solve.json).

Usage: `solve_task(task_dir, run_dir, config, driver, client)`; `make_driver(config, os.environ)`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import docker

from taskfoundry import atomic
from taskfoundry.errors import SandboxError
from taskfoundry.models import save_json
from taskfoundry.solve.config import SolveConfig
from taskfoundry.solve.container import WorkerBox
from taskfoundry.solve.drivers import CommandDriver, Driver, ModelDriver, Outcome
from taskfoundry.solve.records import SOLVE_JSON, SUBMISSION, SolveRecord, task_run_dir
from taskfoundry.solve.view import load_view

log = logging.getLogger(__name__)


def make_driver(config: SolveConfig, environ: Mapping[str, str]) -> Driver:
    """The model loop for `config.model` (its API key read from `environ`), else the command."""
    if config.agent_command is not None:
        return CommandDriver(config.agent_command, config)
    return ModelDriver.from_config(config, environ)


def solve_task(
    task_dir: Path,
    run_dir: Path,
    config: SolveConfig,
    driver: Driver,
    client: docker.DockerClient,
    image: str | None = None,
) -> SolveRecord:
    """Run `driver` on the task; always writes solve.json, and submission.tar.gz when the
    workspace could be packed (whatever the end reason: a budget's end still leaves work to
    grade). `image` replaces the start-state image (the isolation tests' switch only)."""
    view = load_view(task_dir)
    out = task_run_dir(run_dir, view.task_id)
    out.mkdir(parents=True, exist_ok=True)
    (out / SUBMISSION).unlink(missing_ok=True)  # a stale one must not be graded as this run's
    started, clock = datetime.now(UTC), time.monotonic()
    size = 0
    try:
        with WorkerBox(view, config.isolation, client, image) as box:
            box.prepare(Path(config.agent_dir) if config.agent_dir else None)
            outcome = driver.run(box, out)
            data = box.pack_submission()
        atomic.write_bytes(out / SUBMISSION, data)
        size = len(data)
    except SandboxError as exc:
        log.warning("%s: sandbox failed: %s", view.task_id, exc)
        outcome = Outcome(end_reason="sandbox_error", error=str(exc))
    record = SolveRecord(
        task_id=view.task_id,
        kind=view.kind,
        driver=config.driver,
        end_reason=outcome.end_reason,
        error=outcome.error,
        steps=outcome.steps,
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
        cost_usd=outcome.cost_usd,
        seconds=round(time.monotonic() - clock, 3),
        submission_bytes=size,
        started_at=started,
    )
    save_json(out / SOLVE_JSON, record)
    log.info("%s: %s in %d steps, %d bytes submitted", view.task_id, record.end_reason, record.steps, size)
    return record
