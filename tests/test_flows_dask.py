"""Dask for real: a refresh batch whose sources run on a `distributed.LocalCluster` of two worker
processes through prefect-dask (`orchestration.dask_address`). One candidate is found built at
its commit (skipped), one is no repository and fails at its source stage; both rows come back
from tasks the cluster's workers ran, reporting to this session's Prefect server."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_flows_refresh import _fake_task

from taskfoundry.config import Config

from conftest import make_repo


def test_a_refresh_batch_runs_on_a_dask_cluster_of_two_worker_processes(
    prefect_harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("prefect_dask")
    from distributed import Client, LocalCluster, get_task_stream
    from prefect.settings import get_current_settings

    from taskfoundry.flows.refresh import refresh_flow

    built = make_repo(tmp_path / "built", {"a.c": "int main(void) { return 0; }\n"})
    missing = str(tmp_path / "no-such-source")
    out = tmp_path / "out"
    task_dir = _fake_task(Config(out=out), built)
    # the workers are processes of their own: they find the Prefect server through the environment
    monkeypatch.setenv("PREFECT_API_URL", str(get_current_settings().api.url))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            addresses = set(client.scheduler_info()["workers"])
            config = Config.model_validate(
                {
                    "out": str(out),
                    "orchestration": {
                        "dask_address": cluster.scheduler_address,
                        "refresh": {"sources": [str(built), missing]},
                    },
                }
            )
            with get_task_stream(client) as tasks:  # which worker ran what
                summary = refresh_flow(config)
            stream = tasks.data
    rows = {r.source: r for r in summary.rows}
    assert (rows[str(built)].status, rows[str(built)].task_id) == ("skipped", task_dir.name), rows
    assert rows[missing].status == "failed" and rows[missing].stage == "source", rows[missing]
    # both sources ran as tasks on the cluster's two worker processes
    assert len(addresses) == 2 and len(stream) >= 2, stream
    assert {t["worker"] for t in stream} <= addresses
