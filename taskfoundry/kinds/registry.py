"""Task kinds by name, imported only when chosen (a plain name -> "module:attribute" dict)."""

from __future__ import annotations

from typing import Any

from taskfoundry.dotted import load
from taskfoundry.errors import ConfigError

DEFAULT = "program"
KINDS: dict[str, str] = {
    "program": "taskfoundry.kinds.program.kind:ProgramKind",
    "function": "taskfoundry.kinds.function.kind:FunctionKind",
    "feature": "taskfoundry.kinds.feature.kind:FeatureKind",
}


def check_name(name: str) -> str:
    """`name` if it is a kind; a ConfigError listing the kinds if not."""
    if name not in KINDS:
        raise ConfigError(f"unknown task kind {name!r}; kinds: {', '.join(KINDS)}")
    return name


def load_kind(name: str) -> Any:
    """An instance of the kind called `name` (typed by `kinds.base.make_kind`)."""
    return load(KINDS[check_name(name)])()
