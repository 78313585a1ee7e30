"""The grader's gold-code check and the grader's smaller holes, on real executables built here."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from elf_rewrap import rewrap

from taskfoundry.grading.goldcode import THRESHOLD, code_pages, gold_code_share, submission_digest
from taskfoundry.grading.scripts import REMOVE_HASHED, logged, remove_hashed_cmd
from taskfoundry.grading.workspace import escaping_links
from taskfoundry.kinds.program.cleanroom.elf import linkage

UPPER = r"""#include <stdio.h>
int main(void){ char b[256]; while (fgets(b, sizeof b, stdin)) { for (char *p = b; *p; p++)
  if (*p >= 'a' && *p <= 'z') *p -= 32; fputs(b, stdout); } return 0; }
"""
COUNT = r"""#include <stdio.h>
#include <string.h>
int main(void){ char l[512]; long n = 0; while (fgets(l, sizeof l, stdin)) { n += strlen(l);
  printf("%ld %s", n, l); } return 0; }
"""


def cc(tmp: Path, name: str, source: str, *flags: str) -> bytes:
    if shutil.which("gcc") is None:
        pytest.skip("no gcc on this machine")
    (tmp / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-O2", *flags, "-o", str(tmp / name), str(tmp / f"{name}.c")], check=True)
    return (tmp / name).read_bytes()


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    tmp = tmp_path_factory.mktemp("elf")
    return {
        "gold": cc(tmp, "gold", UPPER, "-static"),
        "gold_dynamic": cc(tmp, "gold_dynamic", UPPER),
        "other_static": cc(tmp, "other", COUNT, "-static"),
        "other_dynamic": cc(tmp, "other_dynamic", COUNT),
    }


def run(tmp: Path, exe: bytes, stdin: bytes) -> bytes:
    path = tmp / "exe"
    path.write_bytes(exe)
    path.chmod(0o755)
    return subprocess.run([str(path)], input=stdin, capture_output=True, check=True).stdout


def test_linkage_of_real_executables(programs: dict[str, bytes]) -> None:
    assert linkage(programs["gold"]) == "static"
    assert linkage(programs["gold_dynamic"]) == "dynamic"
    assert linkage(b"#!/bin/sh\necho hi\n") == "script"
    assert linkage(b"not an elf") == "unknown"


@pytest.mark.parametrize("gold_name", ["gold", "gold_dynamic"])
def test_the_gold_however_wrapped_carries_its_code(
    programs: dict[str, bytes], gold_name: str, tmp_path: Path
) -> None:
    gold = programs[gold_name]
    pages = code_pages(gold)
    assert pages
    padded = gold + b"\n# a few bytes\n"
    assert gold_code_share(padded, pages) == 1.0
    if gold_name == "gold":  # a dump written back as an ELF of its own: it runs, and is caught
        wrapped = rewrap(gold)
        assert wrapped != gold and run(tmp_path, wrapped, b"abc\n") == b"ABC\n"
        assert gold_code_share(wrapped, pages) >= THRESHOLD


def test_rebuilds_from_scratch_share_no_code_with_the_gold(programs: dict[str, bytes]) -> None:
    pages = code_pages(programs["gold"])
    for name in ("other_static", "other_dynamic", "gold_dynamic"):
        assert gold_code_share(programs[name], pages) < THRESHOLD, name
    assert gold_code_share(b"#!/bin/sh\ntr a-z A-Z\n", pages) == 0.0
    assert gold_code_share(b"\x7fELF garbage that is no ELF", pages) == 0.0


def tgz(files: dict[str, bytes], order: list[str] | None = None, mtime: int = 0) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name in order or list(files):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(files[name]), mtime
            tar.addfile(info, io.BytesIO(files[name]))
    return out.getvalue()


def test_submission_digest_is_the_files_not_the_packing() -> None:
    files = {"compile.sh": b"#!/bin/sh\nmake\n", "src/main.c": b"int main;"}
    one = submission_digest(tgz(files))
    assert one and one == submission_digest(tgz(files, ["src/main.c", "compile.sh"], mtime=5))
    assert one != submission_digest(tgz({**files, "src/main.c": b"int main; "}))
    assert one != submission_digest(tgz({**files, "extra": b""}))
    assert submission_digest(b"not a tar") == ""


def workspace_tar(tmp: Path, links: dict[str, str]) -> Path:
    path = tmp / "ws.tar"
    with tarfile.open(path, "w") as tar:
        for name, target in links.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


def test_escaping_links_are_the_relative_ones_that_climb_out(tmp_path: Path) -> None:
    tar = workspace_tar(
        tmp_path,
        {
            "./venv/bin/python": "/usr/bin/python3",  # absolute: stays in the container
            "./lib64": "lib",
            "./a/b/up": "../../c",
            "./leak": "../../../etc/passwd",
            "./a/out": "../../x",
        },
    )
    assert sorted(escaping_links(tar)) == ["./a/out", "./leak"]


def remove_hashed(tmp: Path, root: Path, hashes: list[str], sizes: frozenset[int]) -> dict[str, object]:
    script = tmp / "remove.py"
    script.write_text(REMOVE_HASHED)
    argv = remove_hashed_cmd(str(root), hashes, sizes).split()
    argv[argv.index("python3") : argv.index("python3") + 2] = [sys.executable, "-I"]
    argv[argv.index("/tmp/tf-remove-hashed.py")] = str(script)
    result: dict[str, object] = json.loads(subprocess.run(argv, capture_output=True, check=True).stdout)
    return result


def test_hashing_for_removal_touches_only_files_of_the_golds_size(tmp_path: Path) -> None:
    import hashlib

    gold = b"\x7fELF the gold"
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "copy").write_bytes(gold)
    with (ws / "sparse").open("wb") as handle:  # a sparse bomb: 1 TiB of holes, no blocks
        handle.truncate(1 << 40)
    (ws / "small").write_bytes(b"x")
    digest = hashlib.sha256(gold).hexdigest()
    on = remove_hashed(tmp_path, ws, [digest], frozenset({len(gold)}))
    assert on["hashed"] == 1 and [os.path.basename(str(p)) for p in on["removed"]] == ["copy"]  # type: ignore[union-attr]
    (ws / "sparse").unlink()
    with (ws / "sparse").open("wb") as handle:  # the defence off: every file is read (a small bomb)
        handle.truncate(1 << 24)
    off = remove_hashed(tmp_path, ws, [digest], frozenset())
    assert off["hashed"] == 2


def test_the_suite_log_is_the_runners_alone(tmp_path: Path) -> None:
    log = tmp_path / "tests.log"
    subprocess.run(["sh", "-c", logged("echo PASSED", str(log))], check=True)
    assert log.read_text() == "PASSED\n"
    assert log.stat().st_mode & 0o777 == 0o600


def test_an_instrumentable_gold_is_labelled_or_refused() -> None:
    from taskfoundry.errors import LeakError
    from taskfoundry.kinds.program.cleanroom.reports import AttackResult, IntegrityReport, LeakReport
    from taskfoundry.kinds.program.cleanroom.stage import require_clean
    from taskfoundry.kinds.program.results import CleanroomStage

    got = {"ld_preload": AttackResult(result="succeeded", detail="preloaded code ran in the gold")}
    report = IntegrityReport(image="i", linkage="dynamic", verdict="instrumentable", attacks={"plain": got})
    clean = CleanroomStage(
        image="i",
        built=True,
        usage={},
        leak=LeakReport(image="i", verdict="clean", findings=[]),
        integrity=report,
    )
    require_clean(clean)  # recorded: the task ships, labelled
    with pytest.raises(LeakError, match="instrumentable .*plain:ld_preload"):
        require_clean(clean, "require")
    require_clean(
        clean.model_copy(update={"integrity": report.model_copy(update={"verdict": "sealed"})}), "require"
    )
