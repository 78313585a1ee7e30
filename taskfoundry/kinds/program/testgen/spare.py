"""The probes the explorer ran, kept on disk with their outcomes and lines: first those it did
not keep (they reached no new line), then those it kept. The mutation stage's guided step
looks among them for probes that reach a survivor's line, and for parents of neighbours
(a number moved by one), instead of exploring the program again."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from taskfoundry.atomic import write_text
from taskfoundry.kinds.program.testgen.explorer import Kept
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, jsonable

SPARE_FILE = "spare-probes.jsonl"  # in the generate stage's log directory
SPARE_LIMIT = 3000  # probes kept at most (a line each, with the lines it reached)


def _data(blob: str | dict[str, str]) -> str | bytes:
    return blob if isinstance(blob, str) else base64.b64decode(blob["b64"])


def _row(kept: Kept) -> dict[str, Any]:
    probe, out = kept.probe, kept.outcome
    return {
        "args": list(probe.args),
        "stdin": jsonable(probe.stdin),
        "files": [[name, jsonable(content)] for name, content in probe.files],
        "origin": probe.origin,
        "feature": kept.feature,
        "outcome": {
            "exit_code": out.exit_code,
            "stdout": out.stdout,
            "stderr": out.stderr,
            "files": out.files,
        },
        "covered": {name: sorted(lines) for name, lines in kept.covered.items()},
    }


def _kept(row: dict[str, Any]) -> Kept:
    probe = Probe(
        tuple(row["args"]),
        _data(row["stdin"]),
        tuple((name, _data(content)) for name, content in row["files"]),
        row["origin"],
    )
    raw = row["outcome"]
    covered = {name: set(lines) for name, lines in row["covered"].items()}
    outcome = Outcome(raw["exit_code"], raw["stdout"], raw["stderr"], False, False, raw["files"], covered)
    return Kept(probe, outcome, row["feature"], covered)


def write_spare(path: Path, spare: list[Kept]) -> None:
    """`spare` (writable outcomes only), the last SPARE_LIMIT of them, as JSON lines, written
    atomically."""
    write_text(path, "".join(json.dumps(_row(k)) + "\n" for k in spare[-SPARE_LIMIT:]))


def read_spare(path: Path) -> list[Kept]:
    """What `write_spare` wrote; nothing when there is no such file (a generator that keeps
    no spare probes, a work directory from before they were kept)."""
    if not path.is_file():
        return []
    return [_kept(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
