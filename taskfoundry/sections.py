"""What the flows hand each stage: its own section of a `Config`, cut here.

A stage never receives the whole `Config`: its section is part of its cache key, so a field
it does not read cannot re-run it, and no stage imports `taskfoundry.config` (which would
put every component in each stage's code hash). Each kind declares its sections in its
`settings.py`; this module, beside `config.py`, is the one place that knows both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import BaseModel

from taskfoundry.config import Config
from taskfoundry.kinds.feature import settings as feature
from taskfoundry.kinds.function import settings as function
from taskfoundry.kinds.program import settings as program
from taskfoundry.kinds.program.settings import GeneratorSettings
from taskfoundry.pipeline.build import BuildSettings

Cut = Callable[[Config], BaseModel]


def for_build(config: Config) -> BuildSettings:
    return BuildSettings(
        out=config.out,
        namespace=config.namespace,
        executable=config.executable,
        base=config.base,
        build_agent=config.build_agent,
    )


# --- the program kind --------------------------------------------------------------------


def for_cleanroom(config: Config) -> program.CleanroomSettings:
    return program.CleanroomSettings(
        out=config.out, namespace=config.namespace, usage_timeout=config.explorer.probe_timeout
    )


def for_generate(config: Config) -> program.GenerateSettings:
    """Only the chosen generator's section: the explorer's seed does not re-run an agent
    branch, nor the agent's budget an explorer branch."""
    if config.generator == "explorer":
        chosen = GeneratorSettings(name="explorer", explorer=config.explorer)
    else:
        chosen = GeneratorSettings(
            name=config.generator, agent=config.agent, dummies=tuple(config.filter.dummies)
        )
    return program.GenerateSettings(out=config.out, namespace=config.namespace, generator=chosen)


def for_filter(config: Config) -> program.FilterSettings:
    return program.FilterSettings(filter=config.filter, harness=config.eval)


def for_mutate(config: Config) -> program.MutationSettings:
    return program.MutationSettings(
        out=config.out,
        namespace=config.namespace,
        mutation=config.mutation,
        explorer=config.explorer,
        generator=for_generate(config).generator,
        filter=for_filter(config),
    )


def for_program_package(config: Config) -> program.PackageSettings:
    return program.PackageSettings(
        out=config.out,
        namespace=config.namespace,
        grade_reference=config.filter.grade_reference,
        harness=config.eval,
        accept=config.accept,
        dummies=config.filter.dummies,
    )


# --- the function kind -------------------------------------------------------------------


def for_functions(config: Config) -> function.FunctionsSettings:
    return function.FunctionsSettings(
        out=config.out, namespace=config.namespace, function=config.function, base=config.base
    )


def for_cases(config: Config) -> function.CasesSettings:
    return function.CasesSettings(out=config.out, namespace=config.namespace, function=config.function)


def for_gate(config: Config) -> function.GateSettings:
    return function.GateSettings(out=config.out, namespace=config.namespace, function=config.function)


def for_function_package(config: Config) -> function.PackageSettings:
    return function.PackageSettings(out=config.out, namespace=config.namespace, function=config.function)


# --- the feature kind: one section for all of its stages ---------------------------------


def for_feature(config: Config) -> feature.FeatureSettings:
    return feature.FeatureSettings(
        out=config.out,
        namespace=config.namespace,
        base=config.base,
        feature=config.feature,
        harness=config.eval,
    )


# by kind, then by step: a part of the kind (`kinds.base.PARTS`) or "package"
CUTS: Mapping[str, Mapping[str, Cut]] = {
    "program": {
        "start_state": for_cleanroom,
        "generate": for_generate,
        "validate": for_filter,
        "strengthen": for_mutate,
        "package": for_program_package,
    },
    "function": {
        "start_state": for_functions,
        "generate": for_cases,
        "validate": for_gate,
        "package": for_function_package,
    },
    "feature": {step: for_feature for step in ("start_state", "generate", "validate", "package")},
}


def section(config: Config, step: str) -> BaseModel | None:
    """The section of `config` that the run's kind hands `step` (None: the step reads none)."""
    cut = CUTS[config.kind].get(step)
    return cut(config) if cut else None
