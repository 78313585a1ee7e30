"""Sandbox conformance checks against the Docker sandbox (one list, run on a real engine)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskfoundry.errors import SandboxError
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def box(docker_client, base_image) -> Iterator[DockerSandbox]:  # type: ignore[no-untyped-def]
    limits = SandboxLimits(memory_mb=512, pids=64, output_bytes=10_000)
    with DockerSandbox(base_image, limits, client=docker_client) as sandbox:
        yield sandbox


def test_exec_returns_output_and_code(box: DockerSandbox) -> None:
    res = box.exec("echo out; echo err >&2; exit 3", timeout=10)
    assert (res.exit_code, res.stdout, res.stderr) == (3, b"out\n", b"err\n")


def test_stdin_is_delivered(box: DockerSandbox) -> None:
    assert box.exec(["cat"], timeout=10, stdin=b"abc\x00def").stdout == b"abc\x00def"


def test_timeout_kills_a_hang(box: DockerSandbox) -> None:
    res = box.exec(["sleep", "60"], timeout=1)
    assert res.timed_out and res.exit_code in (124, 137) and res.duration < 10


def test_output_is_capped(box: DockerSandbox) -> None:
    res = box.exec("yes flood", timeout=20)
    assert res.truncated and len(res.stdout) == 10_000


def test_runs_as_non_root(box: DockerSandbox) -> None:
    assert box.exec(["id", "-u"], timeout=10).stdout.strip() == b"1000"


def test_no_network(box: DockerSandbox) -> None:
    res = box.exec(["cat", "/proc/net/dev"], timeout=10)
    interfaces = [ln.split(":")[0].strip() for ln in res.stdout.decode().splitlines()[2:]]
    assert interfaces == ["lo"]


@pytest.fixture
def own_box(docker_client, base_image) -> Iterator[DockerSandbox]:  # type: ignore[no-untyped-def]
    """A container of its own, for a test whose leftovers would starve the shared one: the fork
    bomb's last sleeps can hold every pid after `_usable_within` saw one `true` run, and the
    next test's exec then failed in runc ("read init-p: connection reset by peer", CI at 538a0a3)."""
    with DockerSandbox(base_image, SandboxLimits(memory_mb=512, pids=64), client=docker_client) as sb:
        yield sb


def test_fork_bomb_is_contained(own_box: DockerSandbox) -> None:
    box = own_box
    res = box.exec("for i in $(seq 200); do sleep 5 & done; wait", timeout=15)
    assert res.exit_code != 0 or b"fork" in res.stderr.lower() or b"resource" in res.stderr.lower()
    assert _usable_within(box, 20)  # the sandbox survives once the bomb's sleeps end


def _usable_within(box: DockerSandbox, seconds: float) -> bool:
    """Whether a command runs again before `seconds` pass. Right after the bomb its sleeps
    hold every pid: the next exec cannot fork (exit 2) or runc cannot start it at all."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if box.exec(["true"], timeout=10).exit_code == 0:
                return True
        except SandboxError:
            pass
        time.sleep(0.5)
    return False


def test_files_in_and_out(box: DockerSandbox, tmp_path: Path) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "f.txt").write_text("hello")
    box.put_dir(tmp_path / "d", "/tmp/copied")
    box.put_file(b"\x01\x02", "/tmp/blob.bin", mode=0o600)
    assert box.get_file("/tmp/copied/sub/f.txt") == b"hello"
    assert box.get_file("/tmp/blob.bin") == b"\x01\x02"
    box.get_dir("/tmp/copied", tmp_path / "back")
    assert (tmp_path / "back" / "sub" / "f.txt").read_text() == "hello"
    with pytest.raises(FileNotFoundError):
        box.get_file("/tmp/does-not-exist")
