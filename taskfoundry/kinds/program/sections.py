"""The program kind's stages' sections of a `Config` (see `taskfoundry.pipeline.sections`)."""

from __future__ import annotations

from taskfoundry.config import Config
from taskfoundry.kinds.program.cleanroom.stage import CleanroomSettings
from taskfoundry.kinds.program.filter.stage import FilterSettings
from taskfoundry.kinds.program.mutate.stage import MutationSettings
from taskfoundry.kinds.program.testgen.base import GeneratorSettings
from taskfoundry.kinds.program.testgen.stage import GenerateSettings


def for_cleanroom(config: Config) -> CleanroomSettings:
    return CleanroomSettings(
        out=config.out, namespace=config.namespace, usage_timeout=config.explorer.probe_timeout
    )


def for_generate(config: Config) -> GenerateSettings:
    """Only the chosen generator's section: the explorer's seed does not re-run an agent
    branch, nor the agent's budget an explorer branch."""
    if config.generator == "explorer":
        chosen = GeneratorSettings(name="explorer", explorer=config.explorer)
    else:
        chosen = GeneratorSettings(
            name=config.generator, agent=config.agent, dummies=tuple(config.filter.dummies)
        )
    return GenerateSettings(out=config.out, namespace=config.namespace, generator=chosen)


def for_filter(config: Config) -> FilterSettings:
    return FilterSettings(filter=config.filter, harness=config.eval)


def for_mutate(config: Config) -> MutationSettings:
    return MutationSettings(
        out=config.out,
        namespace=config.namespace,
        mutation=config.mutation,
        explorer=config.explorer,
        generator=for_generate(config).generator,
        filter=for_filter(config),
    )
