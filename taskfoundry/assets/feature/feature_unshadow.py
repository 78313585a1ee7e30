"""Remove every copy of the project's top-level packages outside the workspace (stdlib only).

usage: python -I feature_unshadow.py TOP...   (run as root in the start image)

A copy is a module or package named TOP where an import would find it as TOP: directly in
an import root (a release in the venv's or the system's site-packages), or vendored by
another package (a `_vendor`, `vendor`, `_vendored`, `extern` or `_extern` folder), and
every wheel, zip or egg that holds a folder named TOP. Anything else of that name is some
other package's submodule (`urllib/parse.py` is not the project `parse`): left alone.
"""

from __future__ import annotations

import os
import shutil
import sys
import zipfile
from collections.abc import Iterable

VENDOR_DIRS = frozenset({"_vendor", "vendor", "_vendored", "extern", "_extern"})
EXTRA_ROOTS = ("/usr/share/python-wheels", "/opt")
MODULE_SUFFIXES = (".py", ".so", ".pyc")


def module_name(filename: str) -> str:
    """`parse` for parse.py, parse.cpython-313-x86_64-linux-gnu.so, parse.pyc."""
    return filename.split(".", 1)[0]


def importable_as_top(directory: str, roots: frozenset[str]) -> bool:
    """Whether a module in `directory` is found under its own name: the directory is an
    import root, or a folder another package vendors its dependencies into."""
    return directory in roots or os.path.basename(directory) in VENDOR_DIRS


def _holds(path: str, tops: frozenset[str]) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            held = {part for n in archive.namelist() for part in n.split("/")[:-1]}
    except (OSError, zipfile.BadZipFile):
        return False
    return bool(held & tops)


def copies(tops: Iterable[str], import_roots: Iterable[str], walk_roots: Iterable[str]) -> list[str]:
    """The paths to remove, found by walking `walk_roots`; `import_roots` are sys.path's."""
    wanted = frozenset(tops)
    roots = frozenset(os.path.realpath(p) for p in import_roots)
    found: list[str] = []
    for root in dict.fromkeys(os.path.realpath(p) for p in walk_roots if os.path.isdir(p)):
        for top, dirs, files in os.walk(root):
            here = importable_as_top(top, roots)
            for name in [d for d in dirs if d in wanted]:
                if here:
                    found.append(os.path.join(top, name))
                    dirs.remove(name)
            for name in files:
                path = os.path.join(top, name)
                if name.endswith((".whl", ".zip", ".egg")):
                    if _holds(path, wanted):
                        found.append(path)
                elif here and name.endswith(MODULE_SUFFIXES) and module_name(name) in wanted:
                    found.append(path)
    return sorted(set(found))


def remove(paths: Iterable[str]) -> None:
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)


def main(tops: list[str]) -> None:
    import_roots = [p for p in sys.path if p.startswith(("/usr", "/opt")) and os.path.isdir(p)]
    remove(copies(tops, import_roots, [*import_roots, *EXTRA_ROOTS]))


if __name__ == "__main__":
    main(sys.argv[1:])
