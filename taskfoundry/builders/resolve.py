"""The entry to every recipe: detected from the repository, or, when nothing is detected and
a model is configured, written by the build agent (`builders.agent`)."""

from __future__ import annotations

import logging

import docker

from taskfoundry.builders.agent import BuildAgent, agent_recipe
from taskfoundry.builders.detect import detect_recipe
from taskfoundry.builders.detect_rust_go import debian_gopath
from taskfoundry.builders.recipe import Recipe
from taskfoundry.errors import NoBuildSystem
from taskfoundry.naming import TaskNames
from taskfoundry.sources import Checkout

log = logging.getLogger(__name__)


def resolve_recipe(
    checkout: Checkout,
    executable: str | None,
    image: str,
    client: docker.DockerClient,
    names: TaskNames,
    agent: BuildAgent | None = None,
) -> Recipe:
    """Detect the recipe; if nothing is detected and an agent is given, let it write one. A
    Debian source's Build-Depends come with it (the detector knows no library by name)."""
    depends = list(checkout.upstream.build_depends) if checkout.upstream else []
    try:
        recipe = detect_recipe(checkout.path, executable, program_hint(checkout))
        if not depends:
            return recipe
        return debian_gopath(recipe.model_copy(update={"build_depends": depends}), checkout.path)
    except NoBuildSystem as exc:
        if agent is None:
            raise
        log.info("%s: %s; asking the build agent", checkout.task_id, exc.message)
        return agent_recipe(checkout, image, client, names, agent)


def program_hint(checkout: Checkout) -> str:
    """The name to look for among the programs a build makes: the repository's, or the first
    program package a Debian source ships when none is named like the source (libzstd: zstd)."""
    programs = checkout.upstream.programs if checkout.upstream else ()
    return checkout.repo if checkout.repo in programs or not programs else programs[0]
