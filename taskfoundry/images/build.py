"""Content-addressed image builds with docker-py's low-level streaming API.

A build's tag is a hash of its context (Dockerfile included); a tag that exists is
never rebuilt. The context, Dockerfile and log of every build are kept on disk,
and a failed build names its log.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import tarfile
from pathlib import Path

import docker
from docker.errors import APIError, ImageNotFound, NotFound

from taskfoundry.errors import ImageError, SandboxError

log = logging.getLogger(__name__)


def context_hash(context: Path) -> str:
    """sha256 over every file's relative path, mode and content, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in context.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(context).as_posix()
        digest.update(rel.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"L" + os.readlink(path).encode())
        else:
            digest.update(oct(path.stat().st_mode & 0o777).encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except ImageNotFound:
        return False


def layers_key(client: docker.DockerClient, tag: str) -> str:
    """A hash of the image's layers (their content hashes, in order): the same for every image
    of the same file system, whatever its config, tag or date (a base made again by `docker
    import` of the same root file system, on an engine that started empty, has a new id)."""
    try:
        layers: list[str] = client.api.inspect_image(tag)["RootFS"]["Layers"]
    except (APIError, KeyError) as exc:
        raise ImageError(f"cannot read the layers of {tag}: {exc}") from exc
    return hashlib.sha256("\n".join(layers).encode()).hexdigest()


def context_tag(context: Path, repository: str) -> str:
    """`repository:<hash of context>`: a build's tag, named by its inputs."""
    return f"{repository}:{context_hash(context)[:16]}"


def build_image(
    client: docker.DockerClient, context: Path, repository: str, logfile: Path
) -> tuple[str, bool]:
    """Build `context` (holding a Dockerfile) as `repository:<hash>`; returns (tag, built).

    A failed build raises ImageError naming its log; the flow names the stage."""
    tag = context_tag(context, repository)
    if image_exists(client, tag):
        return tag, False
    logfile.parent.mkdir(parents=True, exist_ok=True)
    with logfile.open("w") as out:
        error = _stream_build(client, context, tag, out)
    if error:
        raise ImageError(f"docker build failed: {error}", logfile)
    return tag, True


def _stream_build(client: docker.DockerClient, context: Path, tag: str, out: io.TextIOBase) -> str:
    """Run the build, writing its log; return the error text, or '' on success."""
    try:
        stream = client.api.build(
            fileobj=_tar_context(context),
            custom_context=True,
            tag=tag,
            rm=True,
            forcerm=True,
            decode=True,
            pull=False,
        )
        for chunk in stream:
            if "stream" in chunk:
                out.write(chunk["stream"])
            if "error" in chunk:
                out.write(chunk["error"] + "\n")
                return str(chunk["error"]).strip()
    except APIError as exc:
        out.write(f"{exc}\n")
        return str(exc)
    return ""


def _tar_context(context: Path) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(context.rglob("*")):
            tar.add(str(path), arcname=path.relative_to(context).as_posix(), recursive=False)
    buf.seek(0)
    return buf


def tag_alias(client: docker.DockerClient, tag: str, alias: str) -> None:
    """Give an image a second name (the ProgramBench-style task tags)."""
    repo, _, version = alias.rpartition(":")
    try:
        client.images.get(tag).tag(repo, version)
    except APIError as exc:
        raise ImageError(f"cannot tag {tag} as {alias}: {exc}") from exc


def read_image_path(client: docker.DockerClient, image: str, path: str) -> bytes | None:
    """The tar of `path` in `image`, read without running it; None when the path is absent."""
    try:
        container = client.containers.create(image, ["true"])
    except APIError as exc:
        raise SandboxError(f"cannot read {path} of {image}: {exc}") from exc
    try:
        chunks, _ = container.get_archive(path)
        return b"".join(chunks)
    except NotFound:
        return None
    except APIError as exc:
        raise SandboxError(f"cannot read {path} of {image}: {exc}") from exc
    finally:
        container.remove(force=True)
