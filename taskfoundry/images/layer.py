"""An image made of an existing image plus one layer tar, loaded with `docker load`; and the
inputs image, host files in one such layer, that a Dockerfile's COPY and ENV steps would make.

Why not `docker build`: on this engine's storage driver (fuse-overlayfs, a naive diff)
every Dockerfile step runs a container and commits it, and each commit diffs the whole
file system (36,000 files of the base): the cleanroom's seven steps took 96 s of its
113 s. `docker load` of an archive that names the base's layers (already present, so
the engine reads none of them) and holds only the new layer unpacks that one tar.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError

from taskfoundry.errors import ImageError
from taskfoundry.images.build import context_hash, image_exists, read_image_path, tag_alias
from taskfoundry.sandbox.tarutil import extract_one, tar_files, tar_tree

log = logging.getLogger(__name__)
_CREATED = "2000-01-01T00:00:00Z"  # fixed: the same inputs give the same image
_TRUST_ALL = b"[safe]\n\tdirectory = *\n"


def load_layer_image(
    client: docker.DockerClient,
    base: str,
    layer: bytes,
    tag: str,
    *,
    config: Mapping[str, Any],
    comment: str,
) -> tuple[str, bool]:
    """`tag`: `base` + the uncompressed layer tar `layer`, with `config` (User, Env,
    WorkingDir, ... of the image config) over the base's. Returns (tag, built); a tag that
    exists is not loaded again, so `tag` must name the inputs (content-addressed)."""
    if image_exists(client, tag):
        return tag, False
    try:
        info = client.api.inspect_image(base)
    except APIError as exc:
        raise ImageError(f"cannot read base image {base}: {exc}") from exc
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    base_layers: list[str] = info["RootFS"]["Layers"]
    image_config = {
        "architecture": info["Architecture"],
        "os": info["Os"],
        "created": _CREATED,
        "config": {**(info.get("Config") or {}), **config},
        "rootfs": {"type": "layers", "diff_ids": [*base_layers, diff_id]},
        "history": [{"created": _CREATED, "created_by": comment}],
    }
    config_bytes = json.dumps(image_config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    # the base's layers are named, never shipped: the engine finds them by chain id
    layer_names = [f"{d.split(':')[1]}/layer.tar" for d in base_layers] + [f"{diff_id[7:]}/layer.tar"]
    manifest = [{"Config": config_name, "RepoTags": [tag], "Layers": layer_names}]
    archive = tar_files(
        {
            "manifest.json": json.dumps(manifest).encode(),
            config_name: config_bytes,
            layer_names[-1]: layer,
        }
    )
    try:  # the engine streams its progress; an error comes as a message, not a status
        errors = [c["error"] for c in client.api.load_image(archive, quiet=True) if "error" in c]
    except APIError as exc:
        errors = [str(exc)]
    if errors or not image_exists(client, tag):
        # an engine that wants every layer in the archive (the containerd image store)
        log.warning("docker load of %s failed (%s): committing a container instead", tag, errors[:1])
        commit_layer_image(client, base, layer, tag, config=config)
    return tag, True


def commit_layer_image(
    client: docker.DockerClient, base: str, layer: bytes, tag: str, *, config: Mapping[str, Any]
) -> str:
    """The same image made the slow way: a container of `base` (never started), the layer
    unpacked into it, one commit."""
    repo, _, version = tag.rpartition(":")
    try:
        container = client.containers.create(base, ["true"], user="0:0", network_mode="none")
        try:
            if not container.put_archive("/", layer):
                raise ImageError(f"cannot unpack the layer of {tag} into a container of {base}")
            container.commit(repo, version, conf=dict(config))
        finally:
            container.remove(force=True)
    except APIError as exc:
        raise ImageError(f"cannot make {tag} from {base}: {exc}") from exc
    return tag


def tag_as_root(client: docker.DockerClient, tag: str, alias: str, hide: tuple[str, ...] = ()) -> None:
    """`alias`: the image `tag` with root as its default user. ProgramBench's evaluator (>= 1.1)
    runs every step as the image's user and rewrites /etc/resolv.conf before compiling, which
    only root may do; the worker's own image (default user `worker`) stays as it is. git trusts
    the worker's /workspace for root (its `git init` there would stop at "dubious ownership"):
    one layer, /etc/gitconfig with safe.directory added and the `hide` paths whited out,
    loaded (a commit took 8-10 s)."""
    found = read_image_path(client, tag, "/etc/gitconfig")
    gitconfig = (extract_one([found]) if found else b"") + _TRUST_ALL
    # `hide`: paths whited out, e.g. the worker's reference copy of the gold: a grader that left
    # it in place would grade `exec /reference/executable` as the program
    whiteouts = {_whiteout(path): b"" for path in hide}
    layer = tar_files({"etc/gitconfig": gitconfig, **whiteouts})
    try:
        image_id = str(client.api.inspect_image(tag)["Id"])
    except APIError as exc:
        raise ImageError(f"cannot make {alias} from {tag}: {exc}") from exc
    repo, _, _ = alias.rpartition(":")
    made = f"{repo}:root-{hashlib.sha256(image_id.encode() + layer).hexdigest()[:16]}"
    comment = "taskfoundry: root by default; git trusts every directory"
    load_layer_image(client, tag, layer, made, config={"User": "root"}, comment=comment)
    tag_alias(client, made, alias)
    client.images.remove(made)  # the alias keeps the image: one name, not two


def _whiteout(path: str) -> str:
    """The layer entry that deletes `path` (an absolute path) from the layers below."""
    parent, _, name = path.strip("/").rpartition("/")
    return f"{parent}/.wh.{name}" if parent else f".wh.{name}"


def inputs_image(
    client: docker.DockerClient,
    base: str,
    entries: Mapping[str, Path],
    env: Mapping[str, str],
    repository: str,
) -> str:
    """`<repository>:inputs-<hash>`: `base` + each host file or directory of `entries` at its
    destination (an absolute path), root's, with `env` set: what `ENV` and `COPY` steps make.
    As Dockerfile steps each ran a container and committed it, and on a storage driver without
    native diffs (fuse-overlayfs, this engine's) each commit walks the whole file system, 8-10 s
    a step. Named by content (files rebuilt on the host get new times: the same inputs must
    find the same image); an existing one is not loaded again."""
    try:
        info = client.api.inspect_image(base)
    except APIError as exc:
        raise ImageError(f"cannot read the image {base}: {exc}") from exc
    config_env = merged_env((info.get("Config") or {}).get("Env") or [], env)
    contents = [(dest, _content_hash(src)) for dest, src in sorted(entries.items())]
    key = json.dumps([info["Id"], config_env, contents]).encode()
    tag = f"{repository}:inputs-{hashlib.sha256(key).hexdigest()[:16]}"
    if not image_exists(client, tag):
        layer = tar_tree({dest.lstrip("/"): src for dest, src in entries.items()})
        comment = f"taskfoundry: {' '.join(sorted(entries))}"
        load_layer_image(client, base, layer, tag, config={"Env": config_env}, comment=comment)
    return tag


def merged_env(image_env: list[str], env: Mapping[str, str]) -> list[str]:
    """The image's `K=V` list with `env` set over it, as `ENV` steps would leave it."""
    pairs = dict(item.partition("=")[::2] for item in image_env)
    pairs.update(sorted(env.items()))
    return [f"{k}={v}" for k, v in pairs.items()]


def _content_hash(path: Path) -> str:
    if path.is_dir():
        return context_hash(path)
    return hashlib.sha256(oct(path.stat().st_mode & 0o777).encode() + path.read_bytes()).hexdigest()
