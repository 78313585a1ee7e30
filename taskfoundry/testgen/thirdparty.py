"""Which parts of a repository are not the program's own sources.

Coverage targets are about first-party code. Vendored crates, build trees and imported
libraries (gnulib above all: GNU programs carry thousands of lines of it in `lib/`)
are compiled in and measured, but a worker rebuilding the program would not be judged on
them, and counting them sinks every GNU program's line rate.
"""

from __future__ import annotations

import re
from pathlib import Path

# relative path prefixes never counted, whatever the repository
ALWAYS = ("target/", "vendor/", ".cargo/", "third_party/", "third-party/", "build-aux/")
_GL_BASE = re.compile(r"gl_SOURCE_BASE\(\[?([\w./-]+?)\]?\)")
_GL_BASE_COMP = re.compile(r"gl_source_base='([\w./-]+)'")


def gnulib_dirs(repo: Path) -> list[str]:
    """The gnulib source and test directories of a GNU project, if it imports gnulib."""
    cache, comp = repo / "m4" / "gnulib-cache.m4", repo / "m4" / "gnulib-comp.m4"
    found: list[str] = []
    for path, pattern in ((cache, _GL_BASE), (comp, _GL_BASE_COMP)):
        text = path.read_text(errors="replace") if path.is_file() else ""
        found += pattern.findall(text)
    if not found and (comp.is_file() or cache.is_file()):
        found = ["lib"]  # gnulib-tool's default source base
    found += [d for d in ("gnulib", "gl", "gnulib-tests") if (repo / d).is_dir()]
    return [d.strip("/") + "/" for d in dict.fromkeys(found)]


def third_party_prefixes(repo: Path) -> tuple[str, ...]:
    """Relative path prefixes whose lines are left out of first-party coverage."""
    return tuple(dict.fromkeys([*ALWAYS, *gnulib_dirs(repo)]))
