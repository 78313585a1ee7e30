"""Look for a feature's removed code anywhere the worker can read (stdlib only, as the worker).

usage: python3 -I feature_leak.py LINES.json

LINES.json: {"lines": distinctive lines of the removed code (stripped of indentation), "need": N}.
Walks the file system but /proc, /sys and /dev, reads Python sources and the .py members of
wheels and zips, and prints one JSON line: {"found": [[path, line], ...]} (at most 20) for the
files that hold at least N of the lines (one line alone, `except (KeyError, IndexError):`,
is found in unrelated code).
"""

from __future__ import annotations

import json
import os
import sys
import zipfile

SKIP = ("/proc", "/sys", "/dev")
MAX_BYTES = 4 * 1024 * 1024


def _texts(path: str) -> list[tuple[str, str]]:
    if path.endswith((".whl", ".zip", ".egg")):
        try:
            with zipfile.ZipFile(path) as archive:
                return [
                    (f"{path}!{name}", archive.read(name).decode("utf-8", "replace"))
                    for name in archive.namelist()
                    if name.endswith(".py")
                ]
        except (OSError, zipfile.BadZipFile, RuntimeError):
            return []
    if not path.endswith((".py", ".pyi", ".pyx")) or os.path.getsize(path) > MAX_BYTES:
        return []
    with open(path, encoding="utf-8", errors="replace") as handle:
        return [(path, handle.read())]


def main(lines_file: str) -> None:
    with open(lines_file, encoding="utf-8") as handle:
        config = json.load(handle)
    wanted, need = set(config["lines"]), int(config["need"])
    found: list[list[str]] = []
    for top, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in SKIP]
        for name in files:
            path = os.path.join(top, name)
            try:
                texts = _texts(path) if os.path.isfile(path) and not os.path.islink(path) else []
            except OSError:
                continue
            for where, text in texts:
                held = {line.strip() for line in text.splitlines()} & wanted
                if len(held) >= need and len(found) < 20:
                    found.append([where, sorted(held)[0]])
    print(json.dumps({"found": found}))


if __name__ == "__main__":
    main(sys.argv[1])
