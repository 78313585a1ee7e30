"""The one loader of "package.module:attribute" names: registries (subcommands, kinds,
generators, model backends, source providers, grammars) name their entries this way, so a
choice imports only its own code, and the stage cache's code graph can follow the names."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def load(spec: str) -> Any:
    """The attribute `spec` ("package.module:attribute") names, its module imported now."""
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def choose(registry: Mapping[str, str], name: str, unknown: Callable[[str], Exception]) -> Any:
    """What `registry[name]` names; `unknown(known)` is raised for a name not in it, `known`
    listing the registry's names."""
    if name not in registry:
        raise unknown(", ".join(sorted(registry)))
    return load(registry[name])
