"""Types the data flow of a test shares with the modules that tag its values and files.

`dataflow.Flow` implements `ValueFlow`; `files` and `tags` depend on this protocol, not
on `dataflow`, so the three import in one direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import libcst as cst

Tags = frozenset[str]

DEFAULT_RUN_NAMES = frozenset(
    {
        "subprocess.run",
        "subprocess.check_output",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
    }
)
DEFAULT_RUN_LASTS = frozenset(
    {
        "run",
        "check_output",
        "run_program",
        "run_cli",
        "run_cmd",
        "run_command",
        "invoke",
        "communicate",
        "Popen",
        "check_call",
        "run_exe",
        "run_executable",
    }
)


@dataclass
class FlowSettings:
    """The parts of the lint config the data-flow needs."""

    run_names: frozenset[str] = DEFAULT_RUN_NAMES
    run_lasts: frozenset[str] = DEFAULT_RUN_LASTS
    roundtrip: frozenset[str] = frozenset()
    golden_min: int = 200


@dataclass(frozen=True)
class Write:
    """A file the test writes itself: from a value, or copied from another file."""

    key: str
    line: int
    value: cst.BaseExpression | None = None
    source: cst.BaseExpression | None = None


class ValueFlow(Protocol):
    """Definitions and origins of values within one test function."""

    func: cst.FunctionDef
    settings: FlowSettings

    def origins(self, node: cst.BaseExpression) -> Tags: ...

    def name_origins(self, name: str) -> Tags: ...

    def single_value(self, node: cst.BaseExpression) -> cst.BaseExpression: ...

    def is_run_call(self, call: cst.Call) -> bool: ...

    def runs_after(self, writes: list[Write]) -> bool: ...
