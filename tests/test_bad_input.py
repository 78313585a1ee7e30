"""Bad input ends with exit 1, no task directory and, on the terminal, exactly one line: what
was wrong (naming the stage) and the run log, which holds the traceback. Every case runs the
real CLI in a subprocess, against the session's Prefect server (one server start for all)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_repo

HANG_C = "#include <unistd.h>\nint main(void) { for (;;) sleep(1); }\n"
BROKEN_C = "int main(void) { return undefined_symbol; }\n"
MAKEFILE = "prog: prog.c\n\tcc -o prog prog.c\n"
# the CLI as a user runs it; `bug` replaces the source stage with one that raises a KeyError
CLI = "from taskfoundry.cli import main; main(prog_name='taskfoundry')"
BUG = (
    "import taskfoundry.flows.tasks as t\n"
    "def bug(*args):\n    raise KeyError('planted bug')\n"
    "t.source_stage = bug\n"
)
# the CLI, writing at exit whether it imported Prefect (what starts or talks to a server, runs a flow)
PREFECT_SEEN = (
    "import atexit, os, sys\n"
    "atexit.register(lambda: open(os.environ['TF_SEEN'], 'w').write(str('prefect' in sys.modules)))\n" + CLI
)
LINE = re.compile(r"taskfoundry: (?P<message>.+) \[details: (?P<log>/\S+\.log)\]")


@pytest.fixture(scope="module")
def api_url(prefect_harness: None) -> str:
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    assert url
    return str(url)


def run_cli(api_url: str, *args: str, code: str = CLI) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PREFECT_API_URL": api_url}
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=600
    )


def _build(api_url: str, source: Path | str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(api_url, "build", str(source), "--out", str(out), "--no-progress", *extra)


def one_line(proc: subprocess.CompletedProcess[str], out: Path) -> str:
    """The whole terminal output is one line naming the run log, which holds the traceback:
    returns the message."""
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    match = LINE.fullmatch(lines[0])
    assert match, lines[0]
    log = Path(match["log"])
    assert log.parent == out / "work" / "logs"
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and match["message"].split(" [")[0][:60] in text
    assert not (out / "tasks").exists() or not any((out / "tasks").iterdir())
    return match["message"]


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("/no/such/path", "source stage failed: /no/such/path: not a directory"),
        ("weird:thing", "unknown source type 'weird'"),
        ("debian:Not_A_Name", "expected debian:PKG"),
        ("pypi:no-such-package-xyz", "not available"),
        ("crate:no-such-crate-xyz", "not available"),
    ],
)
def test_a_bad_source_is_refused_before_prefect_is_even_imported(
    tmp_path: Path, api_url: str, source: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad input took 13-17 s to refuse: the server started and a flow ran first (issue 59)."""
    seen = tmp_path / "seen"
    monkeypatch.setenv("TF_SEEN", str(seen))
    out = tmp_path / "out"
    proc = run_cli(api_url, "build", source, "--out", str(out), "--no-progress", code=PREFECT_SEEN)
    message = one_line(proc, out)
    assert message.startswith("source stage failed:") and says in message
    assert seen.read_text() == "False", "Prefect was imported: a server or a flow came first"


def test_path_that_is_not_a_repository(tmp_path: Path, api_url: str) -> None:
    (tmp_path / "plain").mkdir()
    message = one_line(_build(api_url, tmp_path / "plain", tmp_path / "out"), tmp_path / "out")
    assert message.startswith("source stage failed:") and "not inside a git repository" in message


def test_unknown_package(tmp_path: Path, api_url: str) -> None:
    # a suite's index is the source stage's to read (apt's update): refused in the flow
    message = one_line(_build(api_url, "debian:no-such-package-xyz", tmp_path / "out"), tmp_path / "out")
    assert message.startswith("source stage failed:") and "not available" in message


def test_repository_with_no_detectable_build(tmp_path: Path, api_url: str) -> None:
    repo = make_repo(tmp_path / "r", {"README.md": "just words\n"})
    message = one_line(_build(api_url, repo, tmp_path / "out"), tmp_path / "out")
    assert message.startswith("build stage failed:") and "no build system detected" in message


def test_malformed_config(tmp_path: Path, api_url: str) -> None:
    (tmp_path / "c.yaml").write_text("explorer: {max_probes: many}\n")
    out = tmp_path / "out"
    message = one_line(_build(api_url, tmp_path, out, "--config", str(tmp_path / "c.yaml")), out)
    assert str(tmp_path / "c.yaml") in message and "explorer.max_probes" in message


def test_verbose_shows_the_traceback(tmp_path: Path, api_url: str) -> None:
    proc = run_cli(api_url, "-v", "build", "/no/such/path", "--out", str(tmp_path / "out"), "--no-progress")
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr and "SourceError" in proc.stderr
    assert LINE.fullmatch(proc.stderr.splitlines()[-1])


def test_unexpected_exception_shows_its_traceback(tmp_path: Path, api_url: str) -> None:
    repo = make_repo(tmp_path / "r", {"README.md": "a source the stage would take\n"})
    proc = run_cli(api_url, "build", str(repo), "--out", str(tmp_path / "out"), code=BUG + CLI)
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr
    assert "KeyError: 'planted bug'" in proc.stderr


@pytest.mark.docker
def test_repository_that_does_not_build(tmp_path: Path, api_url: str, base_image: str) -> None:
    repo = make_repo(tmp_path / "r", {"Makefile": MAKEFILE, "prog.c": BROKEN_C})
    message = one_line(_build(api_url, repo, tmp_path / "out"), tmp_path / "out")
    assert message.startswith("build stage failed:")
    build_log = Path(message.split("(log: ")[1].split(")")[0])
    assert "undefined_symbol" in build_log.read_text()


@pytest.mark.docker
def test_program_that_hangs(tmp_path: Path, api_url: str, base_image: str) -> None:
    repo = make_repo(tmp_path / "r", {"Makefile": MAKEFILE, "prog.c": HANG_C})
    # the canary is tried again at slow_probe_timeout before the program counts as hanging; the
    # replay table's and the explorer's public draws are small (drawn on one core: 20 s of 5,000
    # a seed for a program this small), the path is the same
    (tmp_path / "c.yaml").write_text(
        "explorer: {probe_timeout: 1, slow_probe_timeout: 2, public_probes: 100, replay_probes: 20}\n"
    )
    out = tmp_path / "out"
    message = one_line(_build(api_url, repo, out, "--config", str(tmp_path / "c.yaml")), out)
    assert message.startswith("generate stage failed:") and "hangs" in message
    assert "probes.jsonl" in message


def test_batch_names_its_log(tmp_path: Path, api_url: str) -> None:
    out = tmp_path / "out"
    proc = run_cli(api_url, "build-many", "/no/such/path", "--out", str(out), "--no-progress")
    assert proc.returncode == 1
    assert "failed: /no/such/path: source stage failed: /no/such/path: not a directory" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    # the batch's warning as the source fails (the progress bars' line without them), then the log
    warning, details = proc.stderr.splitlines()
    failure = "source stage failed: /no/such/path: not a directory"
    assert warning == f"WARNING taskfoundry.flows.many: /no/such/path: {failure}"
    assert details.startswith("taskfoundry: details of the failures: ")
    log = Path(details.rsplit(" ", 1)[1])
    assert log.parent == out / "work" / "logs" and "SourceError" in log.read_text()
