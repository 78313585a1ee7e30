#!/usr/bin/env python3
"""A no-logic submission, as an attacker with only public information would write it: the
gold's recorded outcomes on public probes, looked up by argv + stdin + the contents of the
files argv names, else the most common outcome recorded for the same argv, else the most common
one for the same argv with the names of the files it was given left out (`shape`: a call the
pipeline asked again with a file under a secret name still finds the public call's answer).

Rendered by taskfoundry.kinds.program.filter.dummies with its table in DATA; the filter runs
it as a dummy, and a test it passes measures no rebuild. Standard library only: it runs as the
program in the cleanroom."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import zlib

DATA = ""  # zlib + base64 of the table: {"exact", "argv", "shape": {key: i}, "always": i, "outcomes": [...]}


def call_key(args: list[str], stdin: bytes, files: dict[str, bytes]) -> str:
    """The lookup key of one call: its argv, its stdin and the contents of the files it names."""
    named = sorted((n, base64.b64encode(c).decode()) for n, c in files.items())
    blob = json.dumps([list(args), base64.b64encode(stdin).decode(), named])
    return hashlib.sha256(blob.encode()).hexdigest()


def argv_key(args: list[str]) -> str:
    return hashlib.sha256(json.dumps(list(args)).encode()).hexdigest()


def shape_key(args: list[str], files: set[str]) -> str:
    """The argv without the words that name a file the call was given."""
    return argv_key([a for a in args if a not in files])


def named_files(args: list[str]) -> dict[str, bytes]:
    found = {}
    for arg in args:
        try:
            if arg and os.path.isfile(arg):
                with open(arg, "rb") as handle:
                    found[arg] = handle.read()
        except OSError:
            continue
    return found


def lookup(table: dict, args: list[str], stdin: bytes, named: dict[str, bytes]) -> int | None:
    """The outcome's index for a call: by its exact key, else its argv, else its argv without
    the names of its files (`shape`); None: the table has none (taskfoundry's explorer asks the
    same through ReplayTable.answer)."""
    hit = table["exact"].get(call_key(args, stdin, named))
    if hit is None:
        hit = table["argv"].get(argv_key(args))
    if hit is None:
        hit = table.get("shape", {}).get(shape_key(args, set(named)))
    return hit


def replay(outcome: dict) -> None:
    for name, text in outcome.get("files", {}).items():
        if text is None:
            continue
        try:
            os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
            with open(name, "w") as handle:
                handle.write(text)
        except OSError:
            pass
    sys.stdout.write(outcome.get("stdout") or "")
    sys.stderr.write(outcome.get("stderr") or "")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(outcome.get("exit_code", 0)) % 256)


def main() -> None:
    table = json.loads(zlib.decompress(base64.b64decode(DATA)))
    outcomes = table["outcomes"]
    if table.get("always") is not None:
        replay(outcomes[table["always"]])
    args = sys.argv[1:]
    stdin = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
    hit = lookup(table, args, stdin, named_files(args))
    if hit is not None:
        replay(outcomes[hit])
    os._exit(0)


if __name__ == "__main__":
    main()
