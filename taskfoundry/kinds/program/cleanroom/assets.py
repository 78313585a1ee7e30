"""Test assets for the cleanroom: files a worker cannot reasonably make, and nothing else.

From the repository's test, example and data directories, a file is kept when its format
is binary (a NUL byte or not UTF-8) or project-specific (an extension outside the common
text formats, e.g. figlet's `.flf` fonts). Never kept: source code, scripts (a shebang),
build files, build artifacts, expected outputs of the project's tests (`.out`,
`.expected`, anything under `expected/`, `golden/`, ...: they are oracles), common text
formats, extension-less text, and text that parses as source. Kept files go to
`/workspace/assets/<path in the repository>`; a per-file and a total size cap apply.
The leak scan is given the kept files (path and sha256) as allowed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.kinds.program.cleanroom import shingles
from taskfoundry.kinds.program.cleanroom.reports import Asset, AssetReport, Reason
from taskfoundry.syntax.languages import ANY_SOURCE

# Test, example and data directories; `fonts` for programs whose data is fonts (figlet).
DATA_DIRS = {
    "tests",
    "test",
    "testdata",
    "test-data",
    "test_data",
    "testing",
    "testfiles",
    "examples",
    "example",
    "samples",
    "sample",
    "data",
    "fixtures",
    "corpus",
    "fonts",
}
# Bundled third-party code and build output: not the project's assets.
_FOREIGN_DIRS = shingles.SKIP_DIRS | {
    "vendor",
    "third_party",
    "thirdparty",
    "3rdparty",
    "build",
    "_build",
    "__pycache__",
    ".tox",
    ".venv",
    "venv",
}
COMMON_TEXT = {
    ".txt",
    ".md",
    ".rst",
    ".csv",
    ".tsv",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".xml",
    ".html",
    ".htm",
    ".ini",
    ".cfg",
    ".log",
    ".conf",
    ".adoc",
    ".tex",
    ".texi",
    ".svg",
    ".css",
    ".jsonl",
    ".ndjson",
    ".properties",
    ".env",
    ".po",
    ".pot",
}
BUILD_EXT = {".mk", ".cmake", ".in", ".am", ".ac", ".m4", ".ninja", ".def", ".rc"}
BUILD_NAMES = {
    "makefile",
    "gnumakefile",
    "cmakelists.txt",
    "meson.build",
    "cargo.toml",
    "cargo.lock",
    "go.mod",
    "go.sum",
    "build.rs",
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "tox.ini",
    "conftest.py",
    "dockerfile",
    "jamfile",
    "sconstruct",
}
ARTIFACTS = {
    ".o",
    ".obj",
    ".a",
    ".so",
    ".dylib",
    ".dll",
    ".exe",
    ".rlib",
    ".rmeta",
    ".pyc",
    ".pyo",
    ".class",
    ".jar",
    ".gcno",
    ".gcda",
    ".profraw",
    ".profdata",
    ".pdb",
    ".dwo",
    ".whl",
    ".egg",
}
# Recorded outputs of the project's own tests: the answers, never the worker's to read.
EXPECTED = {
    ".out",
    ".expected",
    ".exp",
    ".ok",
    ".golden",
    ".ref",
    ".stdout",
    ".stderr",
    ".err",
    ".ans",
    ".res",
    ".result",
    ".diff",
    ".patch",
    ".snap",
    ".orig",
    ".rej",
}
EXPECTED_DIRS = {
    "expected",
    "expect",
    "golden",
    "goldens",
    "results",
    "output",
    "outputs",
    "snapshots",
    "__snapshots__",
    "baseline",
    "baselines",
    "reference",
    "ref",
}
_TEST_NAME = re.compile(r"^(test_.*|.*_test\.\w+|.*\.test\.\w+|.*_spec\.\w+|run[-_]?tests?.*)$", re.I)


class AssetPolicy(BaseModel):
    max_file_bytes: int = Field(1 << 20, description="largest single asset copied")
    max_total_bytes: int = Field(16 << 20, description="cap on all assets of one task")


def candidates(repo: Path) -> Iterator[Path]:
    """Files under a test, example or data directory of the project (not bundled code)."""
    for path in sorted(repo.rglob("*")):
        parts = path.relative_to(repo).parts
        dirs = {p.lower() for p in parts[:-1]}
        if dirs & DATA_DIRS and not dirs & _FOREIGN_DIRS and not path.is_dir():
            yield path


def classify(rel: str, data: bytes) -> Reason:
    """Why a file (its path in the repository) is kept (binary, project_format) or dropped."""
    parts = rel.lower().split("/")
    lower = parts[-1]
    ext = Path(lower).suffix
    if ext in ANY_SOURCE:
        return "source"
    if lower in BUILD_NAMES or ext in BUILD_EXT:
        return "build_file"
    if ext in ARTIFACTS or data.startswith(b"\x7fELF"):
        return "artifact"
    if ext in EXPECTED or set(parts[:-1]) & EXPECTED_DIRS or "expected" in lower:
        return "expected_output"
    if b"\x00" in data or not _utf8(data):
        return "binary"
    if data.startswith(b"#!") or _TEST_NAME.match(lower):
        return "script"
    if ext in COMMON_TEXT:
        return "common_text"
    if not ext or ext[1:].isdigit():  # no extension, or a man page / numbered copy
        return "plain_text"
    if shingles.parse_as_source(data) is not None:
        return "parses_as_source"
    return "project_format"


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def select_assets(repo: Path, policy: AssetPolicy | None = None) -> tuple[AssetReport, dict[str, bytes]]:
    """The report, and workspace-relative path -> bytes of every kept asset."""
    cap = policy or AssetPolicy()
    report, files, total = AssetReport(), {}, 0
    for path in candidates(repo):
        rel = path.relative_to(repo).as_posix()
        if path.is_symlink():
            report.dropped.append(Asset(path=rel, reason="symlink"))
            continue
        size = path.stat().st_size
        if size > cap.max_file_bytes:
            report.dropped.append(Asset(path=rel, reason="too_large", size=size))
            continue
        data = path.read_bytes()
        reason = classify(rel, data)
        if reason in ("binary", "project_format") and total + size > cap.max_total_bytes:
            reason = "budget"
        asset = Asset(path=rel, reason=reason, size=size, sha256=hashlib.sha256(data).hexdigest())
        if reason in ("binary", "project_format"):
            report.kept.append(asset)
            files[asset.dest] = data
            total += size
        else:
            report.dropped.append(asset)
    return report, files
