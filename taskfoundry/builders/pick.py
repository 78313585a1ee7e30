"""Choosing the program when a build yields several, and other small helpers of detectors."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from taskfoundry.errors import BuildError

log = logging.getLogger(__name__)

#: Directories whose sources are not the program's own (tests, examples, bundled code).
SKIP_DIRS = {
    ".git",
    "test",
    "tests",
    "testing",
    "example",
    "examples",
    "third_party",
    "thirdparty",
    "vendor",
    "extern",
    "external",
    "deps",
    "subprojects",
    "benchmarks",
    "bench",
    "fuzz",
    "doc",
    "docs",
    "node_modules",
    "target",
    "build",
    "_build",
}


def norm(name: str) -> str:
    """Names compare case-blind, with `-`, `_` and `.` alike (PyPI's rule)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def choose(candidates: list[str], want: str | None, names: Iterable[str | None], what: str) -> str:
    """The program to build: `want` if asked for; else the candidate named like one of `names`
    (package, project), else one named after it (`fabio-convert`); else the first listed, with
    a warning naming the others (a source found by discovery has nobody to ask: acl builds
    chacl, getfacl and setfacl)."""
    if want:
        if candidates and want not in candidates:
            raise BuildError(f"{what}: no program {want!r} (found: {', '.join(candidates)})")
        return want
    if not candidates:
        raise BuildError(f"{what}: builds no program")
    wanted = [norm(n) for n in names if n]
    for named in (lambda c, n: c == n, lambda c, n: c.startswith(n + "-")):
        hits = [c for n in wanted for c in candidates if named(norm(c), n)]
        if hits:
            return hits[0]
    if len(set(candidates)) > 1:
        log.warning(
            "%s: builds several programs (%s) and none is named like the package: building %s, the "
            "first listed (set `executable` in taskfoundry.yaml or pass --executable to choose)",
            what, ", ".join(dict.fromkeys(candidates)), candidates[0],
        )  # fmt: skip
    return candidates[0]


def source_files(repo: Path, suffixes: set[str]) -> Iterator[Path]:
    """First-party files with these suffixes: not under test, example or bundled-code dirs."""
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).parts
        if path.suffix in suffixes and path.is_file() and not SKIP_DIRS.intersection(rel[:-1]):
            yield path


CXX_SUFFIXES = {".cc", ".cpp", ".cxx", ".C", ".c++"}
C_SUFFIXES = {".c", *CXX_SUFFIXES}


def c_language(repo: Path) -> str:
    """`cpp` when most first-party sources are C++, else `c`."""
    cxx = sum(1 for _ in source_files(repo, CXX_SUFFIXES))
    c = sum(1 for _ in source_files(repo, {".c"}))
    return "cpp" if cxx > c else "c"


def copy_built(build_dir: str, name: str, dest: str = "executable") -> str:
    """Shell: copy the built program `name` found under `build_dir` (shallowest first) to `dest`."""
    find = (
        f"find {build_dir} -type f -perm -u+x -name '{name}' ! -path '*/.libs/*' "
        "! -path '*/CMakeFiles/*' | awk '{ print length($0), $0 }' | sort -n | cut -d' ' -f2- "
        "| head -n 1"
    )
    return (
        f'tf_exe=$({find}); test -n "$tf_exe" || {{ echo "{name} was not built" >&2; exit 1; }}; '
        f'cp "$tf_exe" {dest}'
    )


def read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""
