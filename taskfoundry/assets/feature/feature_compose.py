"""Compose a feature task's workspace for grading (run as root with `python3 -I`).

usage: feature_compose.py LEVEL SUBMISSION_DIR WORKSPACE

The hidden suite is already at WORKSPACE/eval (restore/: the reference's test files and
pytest configuration; base/: the stripped repository, level 2 only). Level 1: the
submission is the repository. Level 2: the stripped repository first, then each submitted
file: a new file is added, a Python file the repository has is appended to it (its
definitions replace the stubs; `from __future__` lines blanked, so every line keeps its
number after SEPARATOR: the grader's scan and guard count on it), any other replaces it.
Then every conftest.py and pytest configuration file and every test directory the
reference has is removed and restored from eval/restore, so the submission cannot change
the tests or how pytest runs them. Links are never followed or copied.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys

SEPARATOR = "\n\n# ---- submitted ----\n"  # kinds/feature/scan.py imports these two
STEERING = (
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
)


TEST_DIRS = ("tests", "test", "testing")  # kinds/feature/objects.py names the same


def test_root(rel: str) -> str | None:
    """The outermost test directory on `rel`'s path (`tests`, `pkg/tests`), replaced whole by
    the reference's; None for a test file outside one (restored on its own). A package that
    keeps its tests inside (`toolz/tests/`) loses only those, never the package."""
    parts = rel.split("/")[:-1]
    for i, part in enumerate(parts):
        if part in TEST_DIRS:
            return "/".join(parts[: i + 1])
    return None


def regular_files(root: str) -> list[str]:
    found = []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d))]
        for name in files:
            path = os.path.join(top, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                found.append(os.path.relpath(path, root))
    return sorted(found)


def place(src: str, dest: str, append: bool) -> None:
    os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
    if os.path.islink(dest) or (os.path.exists(dest) and not os.path.isfile(dest)):
        shutil.rmtree(dest) if os.path.isdir(dest) and not os.path.islink(dest) else os.unlink(dest)
    if append and os.path.isfile(dest):
        with open(src, encoding="utf-8", errors="replace", newline="") as handle:
            lines = ["\n" if line.startswith("from __future__ import") else line for line in handle]
        with open(dest, "a", encoding="utf-8", newline="") as out:
            out.write(SEPARATOR + "".join(lines))
    else:
        shutil.copyfile(src, dest)


def main(level: int, submission: str, ws: str) -> None:
    restore = os.path.join(ws, "eval", "restore")
    if level == 2:
        base = os.path.join(ws, "eval", "base")
        for rel in regular_files(base):
            place(os.path.join(base, rel), os.path.join(ws, rel), False)
    for rel in regular_files(submission):
        if rel.split(os.sep, 1)[0] == "eval":
            continue
        place(os.path.join(submission, rel), os.path.join(ws, rel), level == 2 and rel.endswith(".py"))
    restored = regular_files(restore)
    test_dirs = {d for d in (test_root(rel) for rel in restored) if d}
    for top, dirs, files in os.walk(ws):
        if os.path.relpath(top, ws).split(os.sep, 1)[0] == "eval":
            dirs[:] = []
            continue
        for name in files:
            if name in STEERING:
                os.unlink(os.path.join(top, name))
    for name in test_dirs:
        path = os.path.join(ws, name)
        if os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)
        elif os.path.isdir(path) and name != "eval":
            shutil.rmtree(path)
    for rel in restored:
        place(os.path.join(restore, rel), os.path.join(ws, rel), False)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
