"""What a worker could replay without building anything: the public probes and the gold's
outcomes on them.

An attacker has the cleanroom (the gold, its docs) and this project's source. Running the
explorer's own candidate generation on the docs with the public default seeds and recording the
gold on every probe gives a lookup table (assets/program/replay_dummy.py replays it). The
explorer keeps none of the public probes (`public_keys`); the filter runs the table, and the
gold's version and help outputs for every call, as dummies: a test any of them passes measures
no rebuild.
"""

from __future__ import annotations

import base64
import itertools
import json
import zlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from taskfoundry import atomic
from taskfoundry.assets import asset
from taskfoundry.assets.program.replay_dummy import argv_key, call_key, lookup, shape_key
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe

VERSION_ARGS = ("--version",)
HELP_ARGS = ("--help",)


def probe_key(probe: Probe) -> str:
    """The replay table's key of a probe: argv, stdin, and the files argv names."""
    files = dict(probe.files)
    named = {a: _bytes(files[a]) for a in probe.args if a in files}
    return call_key(list(probe.args), _bytes(probe.stdin), named)


def _bytes(data: str | bytes) -> bytes:
    return data.encode() if isinstance(data, str) else data


class ReplayTable(BaseModel):
    """The gold's outcomes on public probes: by exact key, the most common by argv alone, and
    the most common by argv without the names of the files the call was given (`shape`)."""

    exact: dict[str, int] = Field(default_factory=dict)
    argv: dict[str, int] = Field(default_factory=dict)
    shape: dict[str, int] = Field(default_factory=dict)
    outcomes: list[dict[str, Any]] = Field(default_factory=list)
    probes: int = Field(0, description="public probes run on the gold")
    seeds: list[int] = Field(default_factory=list, description="the public seeds they were drawn with")

    def outcome_of(self, args: tuple[str, ...]) -> int | None:
        """The recorded outcome of `args` with no stdin and no file (a fixed probe's)."""
        return self.exact.get(call_key(list(args), b"", {}))

    def answer(self, probe: Probe) -> dict[str, Any] | None:
        """What the replay dummy answers `probe` with: the exact call's outcome, else the
        commonest for its argv, else for its argv without the names of its files (None: none)."""
        files = dict(probe.files)
        named = {a: _bytes(files[a]) for a in probe.args if a in files}  # as probe_key names them
        table = {"exact": self.exact, "argv": self.argv, "shape": self.shape}
        hit = lookup(table, list(probe.args), _bytes(probe.stdin), named)
        return None if hit is None else self.outcomes[hit]

    def replays(self, probe: Probe, out: Outcome) -> bool:
        """Whether the replay dummy answers `probe` as the gold did (`out`): its test is one a
        lookup table passes."""
        found = self.answer(probe)
        return found is not None and found == _record(out)

    def save(self, path: Path) -> Path:
        atomic.write_text(path, self.model_dump_json())
        return path

    @classmethod
    def load(cls, path: Path) -> ReplayTable:
        return cls.model_validate_json(path.read_text())


def replay_table(probes: list[Probe], outcomes: list[Outcome], seeds: list[int]) -> ReplayTable:
    """The table an attacker would build from these runs (outputs that are not text, and calls
    that timed out, are left out: an attacker could not replay them either)."""
    table = ReplayTable(probes=len(probes), seeds=list(seeds))
    index: dict[str, int] = {}
    by_argv: dict[str, Counter[int]] = {}
    by_shape: dict[str, Counter[int]] = {}
    for probe, out in zip(probes, outcomes, strict=True):
        if out.not_run or out.timed_out or out.stdout is None or out.stderr is None:
            continue
        record = _record(out)
        i = index.setdefault(json.dumps(record, sort_keys=True), len(table.outcomes))
        if i == len(table.outcomes):
            table.outcomes.append(record)
        table.exact.setdefault(probe_key(probe), i)
        by_argv.setdefault(argv_key(list(probe.args)), Counter())[i] += 1
        by_shape.setdefault(shape_key(list(probe.args), {n for n, _ in probe.files}), Counter())[i] += 1
    table.argv = {k: counts.most_common(1)[0][0] for k, counts in by_argv.items()}
    table.shape = {k: counts.most_common(1)[0][0] for k, counts in by_shape.items()}
    return table


def _record(out: Outcome) -> dict[str, Any]:
    return {"exit_code": out.exit_code, "stdout": out.stdout, "stderr": out.stderr, "files": out.files}


def render_replay(table: ReplayTable, always: int | None = None) -> bytes:
    """The replay dummy as a Python script; `always`: that outcome for every call."""
    data = {
        "exact": table.exact,
        "argv": table.argv,
        "shape": table.shape,
        "outcomes": table.outcomes,
        "always": always,
    }
    if always is not None:  # the one outcome it replays is all it needs
        data = {"exact": {}, "argv": {}, "shape": {}, "outcomes": [table.outcomes[always]], "always": 0}
    blob = base64.b64encode(zlib.compress(json.dumps(data).encode(), 6)).decode()
    code = asset("program/replay_dummy.py").decode()
    return code.replace('DATA = ""', f"DATA = {blob!r}", 1).encode()


def no_logic_dummies(table: ReplayTable) -> dict[str, bytes]:
    """The no-logic submissions a table gives: `replay` (the table), `version` (the gold's
    `--version` outcome for every call) and `help` (its `--help` outcome for every call)."""
    dummies = {"replay": render_replay(table)} if table.outcomes else {}
    for name, args in (("version", VERSION_ARGS), ("help", HELP_ARGS)):
        found = table.outcome_of(args)
        if found is not None:
            dummies[name] = render_replay(table, always=found)
    return dummies


def first_distinct(candidates: Iterable[Probe], limit: int, seen: set[str] | None = None) -> list[Probe]:
    """The first `limit` probes of `candidates` with keys not in `seen` (which grows), as the
    explorer's batches take them; stops after 5,000 repeats in a row (the space used up)."""
    seen = set() if seen is None else seen
    out: list[Probe] = []
    repeats = 0
    for probe in itertools.islice(candidates, limit * 50):
        key = probe.key  # a JSON dump: once a candidate
        if key in seen:
            repeats += 1
            if repeats > 5_000:
                break
            continue
        repeats = 0
        seen.add(key)
        out.append(probe)
        if len(out) >= limit:
            break
    return out
