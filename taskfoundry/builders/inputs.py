"""The build's inputs as one loaded layer over the toolchain image: /src, DEPS and the /task
scripts, with the dependencies' ENV in the image config.

As Dockerfile steps (`ENV`, `COPY deps`, `COPY src`, `COPY scripts`) each ran a container and
committed it, and on a storage driver without native diffs (fuse-overlayfs, this engine's)
each commit walks the whole file system: 8-10 s a step. `docker load` of one layer that
names the toolchain's layers (see `images.layer`) unpacks just the inputs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

import docker
from docker.errors import APIError

from taskfoundry.builders.layout import DEPS
from taskfoundry.errors import ImageError
from taskfoundry.images.build import context_hash, image_exists
from taskfoundry.images.layer import load_layer_image
from taskfoundry.sandbox.tarutil import tar_tree


def inputs_image(
    client: docker.DockerClient,
    toolchain: str,
    context: Path,
    scripts: list[str],
    env: Mapping[str, str],
    repository: str,
) -> str:
    """`<repository>:inputs-<hash>`: `toolchain` + context/src at /src, context/deps (if any) at
    DEPS, each of `scripts` (names in `context`, which holds nothing else) in /task, with `env`
    set. Named by its inputs; an existing one is not loaded again."""
    try:
        info = client.api.inspect_image(toolchain)
    except APIError as exc:
        raise ImageError(f"cannot read the toolchain image {toolchain}: {exc}") from exc
    config_env = merged_env((info.get("Config") or {}).get("Env") or [], env)
    # named by content, not by the layer's bytes: files rebuilt on the host (wheels) get new
    # times, and the same inputs must find the same image
    key = json.dumps([info["Id"], config_env, context_hash(context)]).encode()
    tag = f"{repository}:inputs-{hashlib.sha256(key).hexdigest()[:16]}"
    if image_exists(client, tag):
        return tag
    entries = {"src": context / "src"}
    if (context / "deps").exists():
        entries[DEPS.lstrip("/")] = context / "deps"
    entries.update({f"task/{name}": context / name for name in scripts})
    layer = tar_tree(entries)
    comment = "taskfoundry: the build's inputs (/src, deps, /task scripts)"
    load_layer_image(client, toolchain, layer, tag, config={"Env": config_env}, comment=comment)
    return tag


def merged_env(image_env: list[str], env: Mapping[str, str]) -> list[str]:
    """The image's `K=V` list with `env` set over it, as `ENV` steps would leave it."""
    pairs = dict(item.partition("=")[::2] for item in image_env)
    pairs.update(sorted(env.items()))
    return [f"{k}={v}" for k, v in pairs.items()]
