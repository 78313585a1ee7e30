"""The build stage: the recipe (detected, declared or written by the build agent), then the
gold and coverage builds in a content-addressed image."""

from __future__ import annotations

import hashlib
import os

import docker
from pydantic import Field

from taskfoundry.agent.config import make_model
from taskfoundry.builders.agent import BuildAgent, BuildAgentConfig
from taskfoundry.builders.build import GOLD, run_build
from taskfoundry.builders.resolve import resolve_recipe
from taskfoundry.images.base import BaseImageConfig, ensure_base_image
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.pipeline.settings import PROBE_LIMITS, StageSettings
from taskfoundry.pipeline.source import checkout_of
from taskfoundry.sandbox.docker import DockerSandbox


class BuildSettings(StageSettings):
    """What the build stage reads: the base image, which program, the build agent."""

    executable: str | None = None
    base: BaseImageConfig = Field(default_factory=BaseImageConfig)
    build_agent: BuildAgentConfig = Field(default_factory=BuildAgentConfig)


def _build_agent(settings: BuildSettings) -> BuildAgent | None:
    model = settings.build_agent.model
    return BuildAgent(make_model(model, os.environ), settings.build_agent) if model else None


def build_stage(src: SourceResult, settings: BuildSettings, client: docker.DockerClient) -> BuildStage:
    co = checkout_of(src)
    names = settings.names(src)
    base = ensure_base_image(settings.base, client)
    recipe = resolve_recipe(co, settings.executable, base, client, names, _build_agent(settings))
    res = run_build(co, recipe, base, names, client)
    with DockerSandbox(res.image, PROBE_LIMITS, client=client) as box:
        gold = box.get_file(GOLD)
    return BuildStage(
        base_image=base,
        image=res.image,
        built=res.built,
        recipe=recipe,
        build_sh=res.build_sh,
        gold_sha256=hashlib.sha256(gold).hexdigest(),
        log=res.log,
        toolchain_image=res.toolchain,
    )
