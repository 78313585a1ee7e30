# ruff: noqa: F811 - the fixtures of test_eval_docker, imported to share its one csvq build
"""The grader refuses the gold's code, and four smaller holes of the program grader stay shut.

Each case is a real submission graded against the csvq task (test_eval_docker's `mini`), and
each is graded again with its defence switched off, to show it is the defence that stops it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from elf_rewrap import rewrap
from test_eval_docker import (  # noqa: F401 - fixtures shared with the module beside
    FAIL_EXE,
    SMALL,
    assert_never_passes,
    compile_sh,
    gold_bytes,
    grade,
    mini,
    no_leftovers,
    rate,
    spec,
    submission,
)

from taskfoundry.errors import SandboxError
from taskfoundry.grading import compile as compile_phase
from taskfoundry.grading import steps as harness_steps
from taskfoundry.grading.task import TaskSpec
from taskfoundry.images.build import read_image_path
from taskfoundry.layout import REFERENCE_EXECUTABLE
from taskfoundry.naming import grading_image
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

pytestmark = [pytest.mark.docker, pytest.mark.slow]
OFF = SMALL.model_copy(update={"refuse_gold_code": False})


def copy_of(tmp_path: Path, exe: bytes) -> Path:
    files: dict[str, bytes | str] = {
        "prog.bin": exe,
        **compile_sh("cp prog.bin executable && chmod +x executable"),
    }
    return submission(tmp_path, files)


@pytest.mark.parametrize("how", ["padded", "rewrapped"])
def test_the_golds_code_however_wrapped_scores_zero(
    mini: TaskSpec, docker_client, tmp_path: Path, gold_bytes: bytes, how: str
) -> None:  # type: ignore[no-untyped-def]
    exe = gold_bytes + b"\n# appended\n" if how == "padded" else rewrap(gold_bytes)
    assert exe != gold_bytes
    path = copy_of(tmp_path, exe)
    result = grade(mini, docker_client, path)
    assert result.error_code == "gold_code", (result.error_code, result.error_details)
    assert_never_passes(mini, result)
    off = grade(mini, docker_client, path, OFF)  # the check off: the gold's code passes as a rebuild
    assert off.error_code is None and rate(mini, off) == 1.0


def test_running_the_reference_copy_scores_nothing(mini: TaskSpec, docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wrapper = f'#!/bin/sh\nexec {REFERENCE_EXECUTABLE} "$@"\n'
    files: dict[str, bytes | str] = {"w.sh": wrapper, **compile_sh("cp w.sh executable")}
    with DockerSandbox(mini.task.images.task_cleanroom, SandboxLimits(), client=docker_client) as box:
        box.put_file(wrapper.encode(), "/tmp/w.sh", mode=0o755)  # in the worker's image it is the gold
        assert box.exec(["/tmp/w.sh", "--help"], timeout=30).stdout
    result = grade(mini, docker_client, submission(tmp_path, files))
    assert result.error_code is None
    assert_never_passes(mini, result)
    # ProgramBench's grading image has no reference copy either (a whiteout in its root layer)
    assert read_image_path(docker_client, grading_image(mini.task.images), "/reference") is None


LOG_SPY = (
    "#!/bin/sh\nif cat /tmp/tf-tests.log >/dev/null 2>&1; then echo LOG-READABLE; else echo LOG-SEALED; fi\n"
)


def old_logged(command: str, logfile: str) -> str:
    return f"( {command} ) > {logfile} 2>&1"


def test_the_suites_log_is_not_the_programs_to_read(
    mini: TaskSpec, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    path = submission(tmp_path, {"spy.sh": LOG_SPY, **compile_sh("cp spy.sh executable")})
    messages = " ".join(str(t.extra) for t in grade(mini, docker_client, path).test_results)
    assert "LOG-SEALED" in messages and "LOG-READABLE" not in messages
    monkeypatch.setattr(harness_steps, "logged", old_logged)  # the defence off: a 0644 log
    messages = " ".join(str(t.extra) for t in grade(mini, docker_client, path).test_results)
    assert "LOG-READABLE" in messages


def test_an_escaping_link_in_the_workspace_is_the_submissions_verdict(
    mini: TaskSpec, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    path = submission(tmp_path, compile_sh(f"{FAIL_EXE} && ln -s ../../../etc/passwd leak"))
    result = grade(mini, docker_client, path)
    assert result.error_code == "workspace_unsafe_link" and "leak" in (result.error_details or "")
    assert_never_passes(mini, result)
    monkeypatch.setattr(compile_phase, "refuse_escaping_links", lambda archive: None)
    with pytest.raises(SandboxError):  # the check off: the grader's own failure, "re-run"
        grade(mini, docker_client, path)


def test_a_sparse_bomb_costs_no_hashing(
    mini: TaskSpec, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """A few hundred bytes of tar holding a 200 GB sparse file: only files of the gold's size
    are hashed, so it is never read."""
    work = tmp_path / "bomb"
    work.mkdir()
    (work / "compile.sh").write_text(f"#!/bin/sh\nrm -f big\n{FAIL_EXE}\n")
    (work / "compile.sh").chmod(0o755)
    with (work / "big").open("wb") as handle:
        handle.truncate(200 << 30)
    path = tmp_path / "bomb.tar.gz"
    subprocess.run(["tar", "-cSzf", str(path), "-C", str(work), "compile.sh", "big"], check=True)
    assert path.stat().st_size < 4096
    result = grade(mini, docker_client, path)
    step = next(s for s in result.log if s.step == "remove_hashed_files")
    assert result.error_code is None and '"hashed": 0' in step.output
    assert_never_passes(mini, result)
    monkeypatch.setattr(compile_phase.scripts, "remove_hashed_cmd", _unsized)
    with (work / "big").open("wb") as handle:  # the defence off, on a small bomb: it is read
        handle.truncate(256 << 20)
    subprocess.run(["tar", "-cSzf", str(path), "-C", str(work), "compile.sh", "big"], check=True)
    result = grade(mini, docker_client, path)
    step = next(s for s in result.log if s.step == "remove_hashed_files")
    assert '"hashed": 2' in step.output


def _unsized(root: str, hashes: list[str], sizes: frozenset[int] = frozenset()) -> str:
    from taskfoundry.grading.scripts import REMOVE_HASHED_PATH

    return " ".join(["python3", "-I", REMOVE_HASHED_PATH, root, *hashes])
