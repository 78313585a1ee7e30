"""LocalSandbox: exec, timeout, output cap, files in and out."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskfoundry.errors import SandboxError
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.local import LocalSandbox


@pytest.fixture
def box(tmp_path: Path) -> Iterator[LocalSandbox]:
    with LocalSandbox(tmp_path / "root") as sandbox:
        yield sandbox


def test_local_exec_shell_string_and_argv(box: LocalSandbox) -> None:
    result = box.exec("echo out; echo err >&2; exit 3", timeout=10)
    assert (result.exit_code, result.stdout, result.stderr) == (3, b"out\n", b"err\n")
    assert not result.ok and not result.timed_out and not result.truncated
    assert box.exec(["printf", "%s|", "a b", "c"], timeout=10).stdout == b"a b|c|"


def test_local_exec_stdin_env_and_workdir(box: LocalSandbox) -> None:
    box.put_file(b"x", "/work/sub/file")
    result = box.exec(
        "cat; echo; echo $FOO; ls", timeout=10, stdin=b"in", env={"FOO": "bar"}, workdir="/work/sub"
    )
    assert result.stdout == b"in\nbar\nfile\n"


def test_local_exec_missing_workdir_is_a_sandbox_error(box: LocalSandbox) -> None:
    with pytest.raises(SandboxError, match="does not exist"):
        box.exec("true", timeout=10, workdir="/nope")


def test_local_exec_does_not_leak_host_secrets(box: LocalSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    result = box.exec("env", timeout=10)
    assert b"sk-secret" not in result.stdout
    assert f"SANDBOX_ROOT={box.root}".encode() in result.stdout


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def test_local_timeout_kills_the_process_group(box: LocalSandbox) -> None:
    start = time.monotonic()
    result = box.exec("sleep 60 & echo $! > bg.pid; sleep 60", timeout=1)
    assert result.timed_out and result.exit_code == 137
    assert time.monotonic() - start < 10
    pid = int(box.get_file("/bg.pid"))
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)


def test_local_background_leftovers_do_not_block(box: LocalSandbox) -> None:
    start = time.monotonic()
    result = box.exec("sleep 60 & echo started", timeout=30)
    assert result.ok and result.stdout == b"started\n"
    assert time.monotonic() - start < 10


def test_local_output_cap_truncates_a_flood(tmp_path: Path) -> None:
    limits = SandboxLimits.model_validate({"output_bytes": 1000})
    with LocalSandbox(tmp_path / "r", limits) as box:
        start = time.monotonic()
        result = box.exec("yes", timeout=30)
    assert result.truncated and not result.timed_out
    assert result.stdout == b"y\n" * 500
    assert time.monotonic() - start < 10


def test_local_put_and_get_file(box: LocalSandbox) -> None:
    box.put_file(b"#!/bin/sh\necho run\n", "/bin2/tool", mode=0o755)
    assert box.get_file("/bin2/tool") == b"#!/bin/sh\necho run\n"
    assert (box.host_path("/bin2/tool").stat().st_mode & 0o777) == 0o755
    assert box.exec("./bin2/tool", timeout=10).stdout == b"run\n"
    with pytest.raises(FileNotFoundError):
        box.get_file("/bin2/missing")


def test_local_put_and_get_dir(box: LocalSandbox, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "deep").mkdir(parents=True)
    (src / "deep" / "a.txt").write_text("A")
    box.put_dir(src, "/data/in")
    assert box.get_file("/data/in/deep/a.txt") == b"A"
    out = tmp_path / "out"
    box.get_dir("/data/in", out)
    assert (out / "deep" / "a.txt").read_text() == "A"
    with pytest.raises(FileNotFoundError):
        box.get_dir("/data/none", out)


def test_local_paths_cannot_climb_out_of_root(box: LocalSandbox) -> None:
    assert box.host_path("/../../etc/passwd") == box.root / "etc" / "passwd"
    assert box.host_path("work/../x") == box.root / "x"


def test_local_temp_root_is_removed_on_exit() -> None:
    with LocalSandbox() as box:
        root = box.root
        assert root.is_dir()
    assert not root.exists()
    with pytest.raises(SandboxError, match="outside"):
        _ = box.root


def test_local_given_root_is_kept(tmp_path: Path) -> None:
    with LocalSandbox(tmp_path / "keep") as box:
        box.put_file(b"1", "/f")
    assert (tmp_path / "keep" / "f").read_bytes() == b"1"
    assert os.path.isdir(tmp_path / "keep")
