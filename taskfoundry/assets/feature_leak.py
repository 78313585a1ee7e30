"""Look for a feature's removed code anywhere the worker can read (stdlib only, as the worker).

usage: python3 -I feature_leak.py LINES.json

LINES.json: distinctive lines of the removed code (stripped of indentation). Walks the file
system but /proc, /sys and /dev, reads Python sources and the .py members of wheels and zips
and prints one JSON line: {"found": [[path, line], ...]} (at most 20).
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
        wanted = set(json.load(handle))
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
                hit = next((line for line in text.splitlines() if line.strip() in wanted), None)
                if hit is not None and len(found) < 20:
                    found.append([where, hit.strip()])
    print(json.dumps({"found": found}))


if __name__ == "__main__":
    main(sys.argv[1])
