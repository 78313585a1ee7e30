"""The catalog over the session's real csvq task: records, image names, grading, and a release
made, moved to another folder, loaded (hash check + `docker load`) and graded there."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry.catalog import Catalog, DockerUnavailable
from taskfoundry.cli import main
from taskfoundry.images.build import image_exists
from taskfoundry.models import TaskYaml, TestsJson, load_yaml_model

from catalog_support import write_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]
LATER = datetime(2100, 1, 1, tzinfo=UTC)  # a neighbour task "built" after every cut-off below


@pytest.fixture(scope="module")
def csvq_task(example_task) -> Path:  # type: ignore[no-untyped-def]
    return example_task("csvq")  # built once per session (tests/conftest.py)


@pytest.fixture(scope="module")
def out(csvq_task: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An OUT folder: a copy of the real task, and a cheap written neighbour of another kind."""
    out = tmp_path_factory.mktemp("catalog-out")
    shutil.copytree(csvq_task, out / "tasks" / csvq_task.name)
    write_task(
        out / "tasks", "acme__fn.aaaaaaa", language="python", extra={"kind": "function"}, created=LATER
    )
    return out


@pytest.fixture(scope="module")
def reference(csvq_task: Path) -> Path:
    return csvq_task / "solution.tar.gz"  # the task's own reference submission


def do_nothing(dest: Path) -> Path:
    """A submission whose program does nothing: exit 0, no output, whatever it is asked."""
    script = b"#!/bin/sh\nprintf '#!/bin/sh\\nexit 0\\n' > executable\nchmod +x executable\n"
    with tarfile.open(dest, "w:gz") as tar:
        info = tarfile.TarInfo("compile.sh")
        info.size, info.mode = len(script), 0o755
        tar.addfile(info, io.BytesIO(script))
    return dest


def test_the_built_task_is_a_record_with_programbench_image_names(out: Path, docker_client) -> None:  # type: ignore[no-untyped-def]
    cat = Catalog.load(out)
    assert cat.errors == [] and len(cat) == 2
    (record,) = cat.filter(kind="program").tasks()
    task = load_yaml_model(Path(str(record.path)) / "task.yaml", TaskYaml)
    tests = TestsJson.model_validate_json((Path(str(record.path)) / "tests.json").read_text())
    # ProgramBench derives the name from the id: <org>/<id with __ -> _1776_>:<tag>
    base = "taskfoundry/" + record.task_id.replace("__", "_1776_")
    assert record.cleanroom_image == f"{base}:task_cleanroom" and record.image == f"{base}:task"
    assert record.task_id.endswith("." + task.commit[:7]) and record.commit == task.commit
    assert image_exists(docker_client, record.cleanroom_image) and image_exists(docker_client, record.image)
    assert record.tests == sum(len(b.tests) for b in tests.branches.values()) >= 20
    assert (record.language, record.kind, record.line_rate) == ("c", "program", task.stats.line_rate)
    assert cat.filter(language="c").ids() == [record.task_id] == cat.filter(released_before=LATER).ids()
    assert cat.breakdown("kind") == {"function": 1, "program": 1}


def test_dump_and_load_round_trip_of_real_tasks(out: Path, tmp_path: Path) -> None:
    cat = Catalog.load(out)
    assert Catalog.load(cat.dump(tmp_path / "cat.jsonl")).tasks() == cat.tasks()
    result = CliRunner().invoke(main, ["tasks", str(out), "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == cat.as_json()


def test_evaluate_a_reference_and_a_do_nothing_submission(out: Path, reference: Path, tmp_path: Path) -> None:
    cat = Catalog.load(out)
    (record,) = cat.filter(language="c").tasks()
    grade = cat.evaluate(record.task_id, reference, run_dir=tmp_path / "run")
    assert grade.error_code is None, grade.error_details
    assert grade.resolved and grade.passed == grade.total == record.tests and grade.pass_rate == 1.0
    assert grade.eval_json == str(tmp_path / "run" / record.task_id / f"{record.task_id}.eval.json")
    assert cat.grade(record, grade.eval_json) == grade  # eval.json read back scores the same
    nothing = cat.evaluate(record, do_nothing(tmp_path / "nothing.tar.gz"))
    assert nothing.error_code is None and nothing.total == record.tests
    assert nothing.passed == 0 and not nothing.resolved and nothing.pass_rate == 0.0


def test_the_built_task_without_an_engine_is_docker_unavailable(
    out: Path, reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    cat = Catalog.load(out)
    with pytest.raises(DockerUnavailable, match=r"Docker is not available at unix://.*no-engine\.sock"):
        cat.evaluate(cat.filter(kind="program").ids()[0], reference)


@pytest.fixture
def namespace(docker_client) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A namespace of this test's own: its tags are removed however the test ends."""
    ns = f"tfrelease{uuid.uuid4().hex[:8]}"
    yield ns
    for image in docker_client.images.list(name=f"{ns}/*"):
        for tag in image.tags:
            if tag.startswith(f"{ns}/"):
                docker_client.images.remove(tag)


def test_a_release_is_moved_loaded_and_graded_elsewhere(  # type: ignore[no-untyped-def]
    out: Path, reference: Path, tmp_path: Path, namespace: str, docker_client
) -> None:
    made = tmp_path / "made" / "v1"
    args = ["release", str(out), "--as-of", "2099-01-01", "--name", "v1", "--dest", str(made)]
    result = CliRunner().invoke(main, [*args, "--namespace", namespace])
    assert result.exit_code == 0, result.output + repr(result.exception)
    # it said what it was doing while docker save wrote the images (a minute on a big release)
    assert re.search(r"release v1: saving 3 images · MB written [1-9]", result.stderr), result.stderr
    # made to be copied and shared: the modes files made under the umask have, not 0700/0600
    mask = os.umask(0)
    os.umask(mask)
    assert (made.stat().st_mode & 0o777, (made / "release.json").stat().st_mode & 0o777) == (
        0o777 & ~mask,
        0o666 & ~mask,
    )
    info = json.loads((made / "release.json").read_text())
    (task_id,) = info["tasks"]  # the neighbour was built after the cut-off
    assert sorted(info["images"]) == [  # ProgramBench's names: <org>/<id, __ -> _1776_>:<tag>
        f"{namespace}/{task_id.replace('__', '_1776_')}:{t}"
        for t in ("task", "task_cleanroom", "task_cleanroom_v6")
    ]
    for image in info["images"]:  # the other machine has none of them
        docker_client.images.remove(image)
        assert not image_exists(docker_client, image)

    there = tmp_path / "other-machine" / "benchmarks" / "v1"
    shutil.move(made, there)
    loaded = CliRunner().invoke(main, ["release", "load", str(there)])
    assert loaded.exit_code == 0, loaded.output
    assert all(image_exists(docker_client, image) for image in info["images"])

    task_dir = there / "tasks" / task_id  # ProgramBench's layout: task dirs double as the blob folder
    tests = TestsJson.model_validate_json((task_dir / "tests.json").read_text())
    assert all((task_dir / "tests" / f"{key}.tar.gz").is_file() for key in tests.branches)
    cat = Catalog.load(there)
    assert cat.get(task_id).cleanroom_image.startswith(f"{namespace}/")
    assert Catalog.load(there / "catalog.jsonl").tasks() == cat.tasks()
    grade = cat.evaluate(task_id, reference)
    assert grade.error_code is None and grade.resolved, grade.error_details


def test_the_task_s_html_report_shows_its_charts_in_a_browser(out: Path, tmp_path: Path) -> None:
    """Issue 59: coverage by file, survivors by operator, stage times, as an author opens them."""
    from test_catalog_browser import _chromium, _page_text

    (record,) = Catalog.load(out).filter(kind="program").tasks()
    task_dir = Path(str(record.path))
    result = CliRunner().invoke(main, ["report", str(task_dir)])
    assert result.exit_code == 0, result.output
    page = Path(result.output.strip())
    assert page == task_dir / "reports" / "report.html"
    coverage = json.loads((task_dir / "reports" / "coverage.json").read_text())
    mutation = json.loads((task_dir / "reports" / "mutation.json").read_text())
    browser = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,2400"]
    browser += [f"--user-data-dir={tmp_path / 'profile'}", "--allow-file-access-from-files"]
    shot = tmp_path / "report.png"
    subprocess.run(
        [*browser, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=180, check=True
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    dom = subprocess.run([*browser, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0 and dom.stdout.count("<svg") >= 4, dom.stdout[:2000]
    text = _page_text(dom.stdout)
    for heading in ("Rates", "Coverage by file", "Survivors by operator", "Stage times", "Figures"):
        assert heading in text
    assert all(name in text for name in list(coverage["files"])[:3]), text[:3000]
    assert mutation["operators"] and all(op in text for op in mutation["operators"]), text[:3000]
    assert f"tests kept {record.tests}" in text
