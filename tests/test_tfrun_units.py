"""tfrun.run's own pipe handling (`_communicate`), on the host as pytest's own user: what goes
in and comes out whole, both streams at once, and the timeout, whether the program hangs with
its pipes open or after closing them."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from taskfoundry.assets import asset

PROGRAM = """#!/bin/sh
case "$1" in
  echo) cat; echo "to stderr" >&2 ;;
  both) head -c 300000 /dev/zero | tr '\\0' o; head -c 300000 /dev/zero | tr '\\0' e >&2 ;;
  deaf) exit 7 ;;
  hang) sleep 30 ;;
  closed) exec >&- 2>&-; sleep 30 ;;
  slow) sleep 1.5; echo done ;;
esac
"""


@pytest.fixture()
def tfrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    (tmp_path / "executable").write_text(PROGRAM)
    (tmp_path / "executable").chmod(0o755)
    (tmp_path / "tfrun.py").write_bytes(asset("grading/tfrun.py"))
    monkeypatch.setenv("TF_EXECUTABLE", str(tmp_path / "executable"))
    monkeypatch.setenv("TF_TIMEOUT", "1")
    monkeypatch.delenv("TF_PROGRAM_UID", raising=False)
    spec = importlib.util.spec_from_file_location("tfrun_under_test", tmp_path / "tfrun.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_stdin_and_both_streams_pass_whole(tfrun: ModuleType, tmp_path: Path) -> None:
    big = "line of input\n" * 50_000  # 700 kB: more than a pipe holds, written as it reads
    res = tfrun.run(["echo"], stdin=big, cwd=tmp_path)
    assert (res.returncode, res.stdout, res.stderr) == (0, big, "to stderr\n")
    both = tfrun.run(["both"], cwd=tmp_path)  # 300 kB on each stream at once: no deadlock
    assert both.stdout == "o" * 300_000 and both.stderr == "e" * 300_000
    binary = tfrun.run(["echo"], stdin=bytes(range(256)) * 400, cwd=tmp_path)
    assert binary.returncode == 0 and len(binary.stdout.encode("utf-8", "replace")) > 0


def test_a_program_that_does_not_read_its_stdin_ends_normally(tfrun: ModuleType, tmp_path: Path) -> None:
    assert tfrun.run(["deaf"], stdin="x" * 1_000_000, cwd=tmp_path).returncode == 7


@pytest.mark.parametrize("way", ["hang", "closed"])
def test_the_timeout_holds_with_pipes_open_or_closed(tfrun: ModuleType, tmp_path: Path, way: str) -> None:
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        tfrun.run([way], cwd=tmp_path)
    assert time.monotonic() - start < 10  # the timeout's second, not the program's 30


def test_without_a_pidfd_python_waits(
    tfrun: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(tfrun.os, "pidfd_open")
    assert tfrun.run(["echo"], stdin="hi\n", cwd=tmp_path).stdout == "hi\n"
    with pytest.raises(subprocess.TimeoutExpired):
        tfrun.run(["closed"], cwd=tmp_path)


def test_a_slow_program_s_test_gives_its_call_the_longer_time(tfrun: ModuleType, tmp_path: Path) -> None:
    """A test of a slow program says `timeout=` (twice the explorer's longer probe time); under
    TF_TIMEOUT's 1 s alone, the call that takes 1.5 s is cut off. A shorter one leaves TF_TIMEOUT's."""
    assert tfrun.run(["slow"], cwd=tmp_path, timeout=4).stdout == "done\n"
    with pytest.raises(subprocess.TimeoutExpired):
        tfrun.run(["slow"], cwd=tmp_path)
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        tfrun.run(["hang"], cwd=tmp_path, timeout=0.1)
    assert time.monotonic() - start >= 0.9  # TF_TIMEOUT's 1 s, not 0.1


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc on the host to compile the program")
def test_program_json_names_argv0_beside_the_executable(tfrun: ModuleType, tmp_path: Path) -> None:
    """A multi-call program's suite calls it by its own name (eval/tests/program.json): the
    file run stays `executable`, argv[0] is the path beside it with that name."""
    (tmp_path / "argv0.c").write_text(
        "#include <stdio.h>\nint main(int c, char **v) { puts(v[0]); return 0; }\n"
    )
    exe = tmp_path / "executable"
    exe.unlink()
    subprocess.run(["gcc", "-o", str(exe), str(tmp_path / "argv0.c")], check=True)
    work = tmp_path / "work"
    work.mkdir()
    assert tfrun.run([], cwd=work).stdout == f"{exe}\n"  # no program.json: its path
    for text in ('{"called_as": "../elsewhere"}', "not json", '["multi"]'):
        (tmp_path / "program.json").write_text(text)
        assert tfrun.run([], cwd=work).stdout == f"{exe}\n"  # a bad one is no name
    (tmp_path / "program.json").write_text('{"called_as": "multi"}')
    assert tfrun.run([], cwd=work).stdout == f"{tmp_path / 'multi'}\n"
