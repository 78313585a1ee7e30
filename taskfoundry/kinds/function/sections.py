"""The function kind's stages' sections of a `Config`."""

from __future__ import annotations

from taskfoundry.config import Config
from taskfoundry.kinds.function.cases import CasesSettings
from taskfoundry.kinds.function.functions import FunctionsSettings
from taskfoundry.kinds.function.gate import GateSettings


def for_functions(config: Config) -> FunctionsSettings:
    return FunctionsSettings(
        out=config.out, namespace=config.namespace, function=config.function, base=config.base
    )


def for_cases(config: Config) -> CasesSettings:
    return CasesSettings(out=config.out, namespace=config.namespace, function=config.function)


def for_gate(config: Config) -> GateSettings:
    return GateSettings(out=config.out, namespace=config.namespace, function=config.function)
