"""An OUT in object storage, against a real S3-compatible server on loopback (moto, `s3_server`):
a task is whole or invisible, the catalog and `eval` read the same URL, and a build publishes
its task and its stage results there with nothing but the AWS_* variables set, its stages
talking to the Docker engine over TCP (`remote_engine`), so nothing relies on a file system
shared with the engine."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry.cli import main
from taskfoundry.config import Config
from taskfoundry.store import LOCAL_ENV, MARKER, Store, local_root, open_out

from conftest import make_repo


def _bucket() -> str:
    return f"s3://tf-{uuid.uuid4().hex[:12]}"


def _task(path: Path, files: dict[str, str]) -> Path:
    for name, text in {MARKER: "task_id: t\n", **files}.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return path


def test_a_url_out_is_a_store_and_a_local_folder_of_this_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCAL_ENV, str(tmp_path / "w1"))
    config = Config.model_validate({"out": "s3://bucket/tf/"})
    assert config.store == "s3://bucket/tf"
    assert config.out == local_root("s3://bucket/tf") and config.out.is_relative_to(tmp_path / "w1")
    assert Config.model_validate({"out": str(tmp_path)}).store is None


def test_a_task_is_published_whole_its_marker_last(
    s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.at(f"{_bucket()}/tf")
    store.ensure()
    puts: list[str] = []
    real_put = store.fs.put_file
    monkeypatch.setattr(
        store.fs, "put_file", lambda src, dst, **kw: (puts.append(dst), real_put(src, dst, **kw))
    )
    task = _task(tmp_path / "tasks" / "o__r.1234567", {"tests/a.txt": "a", "stale.txt": "old"})
    store.publish_task(task)
    assert puts[-1].endswith(f"o__r.1234567/{MARKER}") and len(puts) == 3
    # republished without a file: the file goes, the marker is again the last put
    (task / "stale.txt").unlink()
    puts.clear()
    store.publish_task(task)
    assert puts[-1].endswith(MARKER)
    assert not store.fs.exists(store.key("tasks", "o__r.1234567", "stale.txt"))
    # a writer stopped half way: files without a marker are no task
    store.fs.pipe_file(store.key("tasks", "half__way.7654321", "tests", "a.txt"), b"a")
    assert store.published() == ["o__r.1234567"]
    mirror = tmp_path / "reader"
    assert store.mirror(mirror) == ["o__r.1234567"]
    assert sorted(p.name for p in (mirror / "tasks").iterdir()) == ["o__r.1234567"]
    assert (mirror / "tasks" / "o__r.1234567" / "tests" / "a.txt").read_text() == "a"


def test_a_store_s_tasks_prefix_reads_as_its_out_and_an_empty_one_is_an_error(
    s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`s3://b/out/tasks`, the form a local path takes and `eval --tasks` suggests, loaded 0 tasks
    with no error (issue 59)."""
    from taskfoundry.catalog import Catalog
    from taskfoundry.errors import ConfigError

    monkeypatch.setenv(LOCAL_ENV, str(tmp_path / "reader"))
    url = f"{_bucket()}/out"
    store = Store.at(url)
    store.ensure()
    store.fs.pipe_file(store.key("index.json"), b"{}")  # a store that exists and holds no task
    with pytest.raises(ConfigError, match="no task published"):
        open_out(url)  # is no catalog of zero tasks
    store.publish_task(_task(tmp_path / "tasks" / "o__r.1234567", {"tests/a.txt": "a"}))
    for given in (url, f"{url}/tasks", f"{url}/tasks/"):
        assert open_out(given) == local_root(url), given
        assert (open_out(given) / "tasks" / "o__r.1234567" / MARKER).is_file()
    # the catalog sees the one task (its stand-in task.yaml is left out as unreadable, by name)
    for given in (url, f"{url}/tasks"):
        catalog = Catalog.load(given)
        assert [Path(e.path).parent.name for e in catalog.errors] == ["o__r.1234567"], given
    wrong = f"{url}/elsewhere/tasks"
    with pytest.raises(ConfigError, match="no such bucket or prefix"):
        open_out(wrong)


def test_an_unreachable_store_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv(LOCAL_ENV, str(tmp_path))
    result = CliRunner().invoke(main, ["tasks", "s3://nowhere/tf"])
    assert result.exit_code != 0 and "s3://nowhere/tf" in result.output, result.output


@pytest.mark.docker
@pytest.mark.slow
def test_a_worker_on_a_remote_engine_publishes_to_s3_and_tasks_and_eval_read_it(
    s3_env: dict[str, str],
    remote_engine: tuple[str, Path],
    prefect_harness: None,
    base_image: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from test_eval_docker import submission
    from test_flows_docker import FAST, TINY

    url = f"{_bucket()}/tf"
    Store.at(url).ensure()
    repo = make_repo(tmp_path / "s3tiny", TINY)
    monkeypatch.setenv(LOCAL_ENV, str(tmp_path / "worker"))
    # every stage and the grader reach the engine over TCP, as a remote one: no shared paths
    host, connections = remote_engine
    monkeypatch.setenv("DOCKER_HOST", host)
    before = int(connections.read_text())
    built = CliRunner().invoke(main, ["build", str(repo), "--out", url, *FAST])
    assert built.exit_code == 0, built.output + repr(built.exception)
    store = Store.at(url)
    (task_id,) = store.published()
    assert store.fs.find(store.key("work", "results")), "no stage result in the store"

    # another machine: its own folder, nothing shared but the store
    monkeypatch.setenv(LOCAL_ENV, str(tmp_path / "reader"))
    listed = CliRunner().invoke(main, ["tasks", url, "--format", "json"])
    assert listed.exit_code == 0, listed.output
    (record,) = json.loads(listed.output)
    assert record["task_id"] == task_id and Path(record["path"]).is_relative_to(tmp_path / "reader")

    task_dir = open_out(url) / "tasks" / task_id
    # the gold source built with other flags: the same behaviour, not the gold binary's bytes
    compile_sh = (task_dir / "build.sh").read_text().replace("make -j2", "make -j2 CFLAGS=-O1")
    files: dict[str, bytes | str] = {**TINY, "compile.sh": compile_sh}
    run_dir = tmp_path / "run" / task_id
    run_dir.mkdir(parents=True)
    submission(run_dir, files).rename(run_dir / "submission.tar.gz")
    graded = CliRunner().invoke(main, ["eval", str(tmp_path / "run"), "--tasks", url])
    assert graded.exit_code == 0, graded.output + repr(graded.exception)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["resolved_rate"] == 1.0, summary
    assert int(connections.read_text()) > before, "nothing went through the forwarded engine"
