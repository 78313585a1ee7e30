"""Resume and batches through the real flows, the real Prefect server and real containers.

One tiny C program is built once (`tiny_clean`); every other run reuses its images
(content-addressed), so only the first build in a fresh engine compiles anything.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from taskfoundry import progress
from taskfoundry.cli import main

from conftest import PLUMBING_YAML, make_repo

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TINY_C = r"""#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *USAGE =
    "usage: tiny COMMAND TEXT\n\n"
    "Commands:\n"
    "  upper TEXT   print TEXT in upper case\n"
    "  count TEXT   print how many characters TEXT has\n\n"
    "Options:\n"
    "  --help       show this help\n"
    "  --version    show the version\n";

int main(int argc, char **argv) {
    if (argc < 2) { fputs(USAGE, stderr); return 2; }
    if (!strcmp(argv[1], "--help")) { fputs(USAGE, stdout); return 0; }
    if (!strcmp(argv[1], "--version")) { puts("tiny 1.0"); return 0; }
    if (argc < 3) { fprintf(stderr, "tiny: %s needs TEXT\n", argv[1]); return 2; }
    if (!strcmp(argv[1], "upper")) {
        for (const char *p = argv[2]; *p; p++) putchar(toupper((unsigned char)*p));
        putchar('\n');
        return 0;
    }
    if (!strcmp(argv[1], "count")) { printf("%zu\n", strlen(argv[2])); return 0; }
    fprintf(stderr, "tiny: unknown command '%s'\n", argv[1]);
    return 1;
}
"""
TINY = {
    "tiny.c": TINY_C,
    "Makefile": "tiny: tiny.c\n\tcc -o tiny tiny.c $(CFLAGS) $(LDFLAGS)\n",
    "README.md": "# tiny\n\nA tiny text tool: `tiny upper TEXT`, `tiny count TEXT`.\n",
}
BROKEN = {
    "Makefile": "prog: prog.c\n\tcc -o prog prog.c\n",
    "prog.c": "int main(void) { return undefined_symbol; }\n",
}
# one seed (not a public one), so that a resumed build and a clean one draw the same suite: each
# build otherwise draws a secret seed of its own (docs/no-logic.md)
FAST = [
    "--max-probes",
    "80",
    "--mutants",
    "0",
    "--no-progress",
    "--seed",
    "52177",
    "--config",
    str(PLUMBING_YAML),
]
NAME = "flowtiny"  # a name no other test uses: its images and containers are ours


class Recorder:
    """A progress sink that remembers which stages came from the cache."""

    def __init__(self) -> None:
        self.cached: dict[str, bool] = {}
        self.stage = ""
        self.counts: dict[str, list[tuple[str, int, int | None]]] = {}
        self.stderr = ""

    def batch_started(self, total: int) -> None:
        pass

    def stage_started(self, source: str, stage: str) -> None:
        self.stage = stage

    def counted(self, source: str, what: str, done: int, total: int | None) -> None:
        self.counts.setdefault(self.stage, []).append((what, done, total))

    def stage_done(self, source: str, stage: str, cached: bool, seconds: float) -> None:
        self.cached[stage] = cached

    def source_done(self, source: str, ok: bool, detail: str) -> None:
        pass


def build(source: Path, out: Path, bars: bool = False) -> Recorder:
    """`taskfoundry build` of `source` in this process (with its progress display: `bars`)."""
    args = [a for a in FAST if not (bars and a == "--no-progress")]
    with progress.listening(Recorder()) as recorder:
        result = CliRunner().invoke(main, ["build", str(source), "--out", str(out), *args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert isinstance(recorder, Recorder)
    recorder.stderr = result.stderr
    return recorder


@pytest.fixture(scope="session")
def tiny_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("src") / NAME, TINY)


@pytest.fixture(scope="session")
def tiny_clean(
    prefect_harness: None, base_image: str, tiny_repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A clean build of the tiny program; returns its task directory."""
    out = tmp_path_factory.mktemp("clean")
    recorder = build(tiny_repo, out)
    probes = [c for c in recorder.counts["generate"] if c[0] == "probes"]  # counted as they run
    assert probes and probes[-1][2] == 80 and probes[-1][1] >= probes[0][1] > 0, recorder.counts
    (task_dir,) = (out / "tasks").iterdir()
    return task_dir


def _api_env() -> dict[str, str]:
    from prefect.settings import get_current_settings

    return {**os.environ, "PREFECT_API_URL": str(get_current_settings().api.url)}


@pytest.fixture()
def killed_after_build(tiny_repo: Path, tmp_path: Path, prefect_harness: None) -> Iterator[Path]:
    """`taskfoundry build` in a process killed (SIGKILL) once its build stage has finished."""
    exe = Path(sys.executable).with_name("taskfoundry")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [str(exe), "-v", "build", str(tiny_repo), "--out", str(out), *FAST],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=_api_env(),
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 600
        for line in proc.stderr:
            if "stage build done" in line or "stage build cached" in line:
                break
            assert time.monotonic() < deadline, "no build stage within 10 minutes"
        else:
            pytest.fail(f"the build process ended before its build stage (exit {proc.wait()})")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        yield out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        remove_orphans(NAME)


def remove_orphans(name: str) -> None:
    """Sandboxes a killed process had open for the repo `name`: SIGKILL left them running."""
    from taskfoundry.sandbox.docker import docker_client

    client = docker_client()
    for container in client.containers.list(filters={"label": "taskfoundry=sandbox"}):
        if any(f"local_1776_{name}" in tag for tag in container.image.tags):
            container.remove(force=True)
    client.close()


def _build_images(client, name: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {i.id for i in client.images.list() if any(f"build-local_1776_{name}:" in t for t in i.tags)}


def _test_files(task_dir: Path) -> dict[str, bytes]:
    (tarball,) = (task_dir / "tests").glob("*.tar.gz")
    with tarfile.open(tarball) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def _task_yaml(task_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((task_dir / "task.yaml").read_text())
    return data


def _tests_json(task_dir: Path) -> dict[str, object]:
    data = json.loads((task_dir / "tests.json").read_text())
    for branch in data["branches"].values():
        for ignored in branch["ignored_tests"]:
            for reason in ignored["reasons"]:
                reason.pop("timestamp")
    return data


def test_killed_build_resumes_after_its_last_stage(
    killed_after_build: Path,
    tiny_clean: Path,
    tiny_repo: Path,
    docker_client,  # type: ignore[no-untyped-def]
) -> None:
    out = killed_after_build
    assert not (out / "tasks").exists(), "the killed run must not have packaged a task"
    assert any((out / "work" / "results").iterdir()), "the build stage's result was persisted"
    images_before = _build_images(docker_client, NAME)
    recorder = build(tiny_repo, out, bars=True)
    assert recorder.cached["build"] is True and recorder.cached["source"] is False
    assert f"{tiny_repo}: resuming after build (from the cache: build)" in recorder.stderr
    assert _build_images(docker_client, NAME) == images_before, "no new build image"
    resumed = out / "tasks" / tiny_clean.name
    assert _tests_json(resumed) == _tests_json(tiny_clean)
    assert _test_files(resumed) == _test_files(tiny_clean)
    stats = _task_yaml(resumed)["stats"]
    assert "build" in stats["reused_stages"] and "generate" not in stats["reused_stages"]
    assert "build" not in stats["stage_seconds"], "a cache lookup's time is not the build's"


def test_batch_with_a_broken_source_packages_the_rest(
    tiny_clean: Path, tiny_repo: Path, tmp_path: Path
) -> None:
    from taskfoundry.flows.artifacts import read_artifacts

    broken = make_repo(tmp_path / "broken", BROKEN)
    out = tiny_clean.parent.parent  # the tiny program's stages resume from the clean build
    made = _task_yaml(tiny_clean)
    result = CliRunner().invoke(
        main, ["build-many", str(tiny_repo), str(broken), "--out", str(out), "--concurrency", "2", *FAST]
    )
    assert result.exit_code == 1, result.output
    assert f"failed: {broken}: build stage failed" in result.output, result.output
    again = _task_yaml(tiny_clean)  # every stage came from the cache: the same task, as made
    assert again["created_at"] == made["created_at"], "a cached re-run is no new task"
    assert again["stats"]["stage_seconds"] == made["stats"]["stage_seconds"]
    assert {"build", "generate", "filter"} <= set(again["stats"]["reused_stages"])
    assert made["stats"]["reused_stages"] == []
    (run_file,) = (out / "runs").glob("build-many-*.json")
    rows = {r["source"]: r for r in json.loads(run_file.read_text())["rows"]}
    assert rows[str(tiny_repo)]["status"] == "built"
    assert rows[str(broken)]["status"] == "failed" and rows[str(broken)]["stage"] == "build"
    artifact = read_artifacts(["build-many-summary"])[0]  # the newest
    table = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    assert {(r["source"], r["status"]) for r in table} == {(str(tiny_repo), "built"), (str(broken), "failed")}
    catalog = read_artifacts(["catalog"])[0]  # build-many refreshed the catalog of its OUT folder
    listed = json.loads(catalog.data) if isinstance(catalog.data, str) else catalog.data
    assert tiny_clean.name in {r["task"] for r in listed} and str(out) in (catalog.description or "")
