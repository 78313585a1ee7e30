"""Dask for real: a refresh batch whose sources run on a `distributed.LocalCluster` of two worker
processes through prefect-dask (`orchestration.dask_address`). csvq, built once per session, is
found built at its commit (skipped) and a missing source fails at its source stage; both rows
come back from the cluster's workers, not from this process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskfoundry.config import Config

from conftest import EXAMPLES

pytestmark = [pytest.mark.docker]


def test_a_refresh_batch_runs_on_a_dask_cluster_of_two_worker_processes(
    example_task,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    pytest.importorskip("prefect_dask")
    from distributed import Client, LocalCluster
    from prefect.settings import get_current_settings

    from taskfoundry.flows.refresh import refresh_flow

    built = example_task("csvq")
    out = tmp_path / "out"
    shutil.copytree(built, out / "tasks" / built.name)
    # the workers are processes of their own: they find the Prefect server through the environment
    monkeypatch.setenv("PREFECT_API_URL", str(get_current_settings().api.url))
    missing = str(tmp_path / "no-such-source")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            addresses = set(client.scheduler_info()["workers"])
            config = Config.model_validate(
                {
                    "out": str(out),
                    "orchestration": {
                        "dask_address": cluster.scheduler_address,
                        "refresh": {"sources": [str(EXAMPLES / "csvq"), missing]},
                    },
                }
            )
            summary = refresh_flow(config)
            stream = client.get_task_stream()
    rows = {r.source: r for r in summary.rows}
    csvq = rows[str(EXAMPLES / "csvq")]
    assert csvq.status == "skipped" and csvq.task_id == built.name, csvq
    assert rows[missing].status == "failed" and rows[missing].stage == "source", rows[missing]
    # both sources ran as tasks on the cluster's two worker processes, none in this one
    assert len(addresses) == 2 and len(stream) >= 2, stream
    assert {t["worker"] for t in stream} <= addresses
