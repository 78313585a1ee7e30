"""Would a dummy executable pass the exact-output test of this probe? Then the test is worthless.

Mirrors `taskfoundry.kinds.program.filter.dummies`: the filter remains the judge; this only keeps the
explorer from writing tests that the filter would drop.
"""

from __future__ import annotations

from taskfoundry.kinds.program.testgen.probes import Outcome, Probe


def dummy_passing(probe: Probe, out: Outcome, usage: str) -> str | None:
    """The name of a dummy that reproduces this outcome exactly, or None."""
    if out.files:
        return None  # no dummy writes files
    usage_nl = usage if usage.endswith("\n") or not usage else usage + "\n"
    candidates = {
        "silent": (0, "", ""),
        "fail": (1, "", ""),
        "echo": (0, " ".join(probe.args) + "\n", ""),
        "cat": (0, _as_text(probe.stdin), ""),
        "usage": (0, usage_nl, ""),
        "usage-err": (1, "", usage_nl),
    }
    actual = (out.exit_code, out.stdout, out.stderr)
    for name, expected in candidates.items():
        if actual == expected:
            return name
    return None


def _as_text(data: str | bytes) -> str | None:
    """What an outcome records for these bytes on stdout: None when not UTF-8."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
