"""The test-asset policy (what the cleanroom copies from test and data directories) and the
source-copy hashes of the leak scan (documentation is not a source copy). No Docker."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from taskfoundry.kinds.program.cleanroom.assets import AssetPolicy, classify, select_assets
from taskfoundry.kinds.program.cleanroom.leakscan import source_hashes

FONT = b"flf2a$ 8 6 14 15 2\nstandard by Glenn Chappell\n" + b" $@\n _ $@@\n" * 30
C_CODE = b'#include <stdio.h>\n\nint main(void)\n{\n    puts("hello");\n    return 0;\n}\n'


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("standard.flf", FONT, "project_format"),
        ("sample.gz", b"\x1f\x8b\x08\x00" + bytes(range(256)), "binary"),
        ("latin1.txt", "caf\xe9\n".encode("latin-1"), "binary"),  # not UTF-8: a worker cannot type it
        ("noext", b"\x00\x01\x02", "binary"),
        ("input.csv", b"a,b\n1,2\n", "common_text"),
        ("notes.md", b"# notes\n", "common_text"),
        ("config.yaml", b"a: 1\n", "common_text"),
        ("hello-1", b"#!/bin/sh\necho hi\n", "script"),
        ("runtests", b"set -e\n./hello\n", "script"),
        ("test_cli.py", b"def test_x(): pass\n", "source"),
        ("check.sh", b"echo\n", "source"),
        ("golden.bin.c", C_CODE, "source"),
        ("Makefile", b"all:\n", "build_file"),
        ("Makefile.am", b"TESTS = a\n", "build_file"),
        ("helper.o", b"\x7fELF\x02", "artifact"),
        ("prebuilt", b"\x7fELF\x02\x01\x01\x00", "artifact"),
        ("counts.out", b"3 12 80\n", "expected_output"),
        ("hello.expected", b"hello\n", "expected_output"),
        ("tests/expected/out_file.csv.data", b"a;b\n", "expected_output"),  # csvq: an oracle in expected/
        ("tests/golden/frame.bin", b"\x00\x01", "expected_output"),
        ("README", b"how the tests work\n", "plain_text"),
        ("code.dat", C_CODE, "parses_as_source"),
    ],
)
def test_classify(name: str, data: bytes, reason: str) -> None:
    assert classify(name, data) == reason


def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def test_select_assets_keeps_only_data_dirs_and_respects_caps(tmp_path: Path) -> None:
    repo = _tree(
        tmp_path,
        {
            "src/fonts.flf": FONT,  # not in a test, example or data directory
            "tests/fonts/standard.flf": FONT,
            "tests/big.bin": b"\x00" * 5000,
            "tests/a.bin": b"\x00" * 3000,
            "tests/b.bin": b"\x00" * 3000,
            "tests/test_x.py": b"x = 1\n",
            "examples/demo.flf": FONT,
            "vendor/lib/tests/v.bin": b"\x00" * 10,
            "src/main.c": C_CODE,
        },
    )
    policy = AssetPolicy(max_file_bytes=4000, max_total_bytes=4000 + 2 * len(FONT))
    report, files = select_assets(repo, policy)
    kept = {a.path: a.reason for a in report.kept}
    assert kept == {
        "examples/demo.flf": "project_format",
        "tests/a.bin": "binary",
        "tests/fonts/standard.flf": "project_format",
    }
    dropped = {a.path: a.reason for a in report.dropped}
    assert dropped == {"tests/big.bin": "too_large", "tests/b.bin": "budget", "tests/test_x.py": "source"}
    assert files["assets/tests/fonts/standard.flf"] == FONT and set(files) == {f"assets/{p}" for p in kept}
    allowed = report.allowed("/workspace")
    assert allowed["/workspace/assets/tests/a.bin"] == hashlib.sha256(b"\x00" * 3000).hexdigest()


def test_documentation_is_no_source_copy(tmp_path: Path) -> None:
    """GNU hello: the cleanroom carries doc/stamp-vti (extension-less, a doc), whose bytes are
    doc/version.texi's; that is documentation too, not a copy of the implementation."""
    vti = b"@set UPDATED 14 May 2023\n@set UPDATED-MONTH May 2023\n@set EDITION 2.12.1\n@set VERSION 2.12.1\n"
    root = _tree(
        tmp_path,
        {
            "doc/version.texi": vti,
            "doc/stamp-vti": vti,
            "doc/hello.1": vti + b"x",
            "src/hello.c": C_CODE * 2,
            "doc/notes": C_CODE * 2,
            "doc/example.c": C_CODE * 3,
            "doc/Makefile.am": b"info_TEXINFOS = x\n" * 5,
            "tests/greeting-1": b"#!/bin/sh\n" * 10,
        },
    )
    hashes = source_hashes(root)
    assert hashlib.sha256(vti).hexdigest() not in hashes
    assert hashlib.sha256(vti + b"x").hexdigest() not in hashes
    # a real source file is still a source copy under any name, in doc/ or not
    assert hashes[hashlib.sha256(C_CODE * 2).hexdigest()] == ("source_copy", "src/hello.c")
    assert hashes[hashlib.sha256(C_CODE * 3).hexdigest()] == ("source_copy", "doc/example.c")
    assert hashes[hashlib.sha256(b"info_TEXINFOS = x\n" * 5).hexdigest()][1] == "doc/Makefile.am"
    assert hashes[hashlib.sha256(b"#!/bin/sh\n" * 10).hexdigest()] == ("hidden_test", "tests/greeting-1")
