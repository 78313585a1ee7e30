"""Images of the feature kind made in one commit each: a container of the environment image,
the tree put in, the commands run, then `docker commit` with the image settings.

A Dockerfile build commits once per instruction, each a container start and a layer commit:
slow on this storage (fuse-overlayfs). One commit is one layer, and whatever the commands
delete before it (the stripped tree of a level-2 image) is in no layer. Tags are content
hashes of the inputs, and a tag that exists is not made again.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

import docker
from docker.errors import APIError, DockerException

from taskfoundry import atomic
from taskfoundry.assets import asset
from taskfoundry.errors import ImageError, SandboxError
from taskfoundry.images.build import image_exists
from taskfoundry.kinds.feature.env import WHEELS
from taskfoundry.kinds.feature.runner import CHECK_LIMITS, PYTHON, tree_tar
from taskfoundry.layout import WORKSPACE
from taskfoundry.sandbox.docker import DockerSandbox

CHANGES = ("USER worker", f"WORKDIR {WORKSPACE}", 'CMD ["/bin/bash"]', "LABEL taskfoundry=feature")


def commit_image(
    client: docker.DockerClient,
    base: str,
    files: Mapping[str, bytes],
    commands: Sequence[str],
    repository: str,
    logfile: Path,
) -> tuple[str, bool]:
    """`repository:<hash>`: `base` with `files` in /workspace after `commands` ran (as root,
    in /workspace, no network); (tag, built)."""
    digest = hashlib.sha256(base.encode())
    for rel, data in sorted(files.items()):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    digest.update("\0".join([*commands, *CHANGES]).encode())
    tag = f"{repository}:{digest.hexdigest()[:16]}"
    if image_exists(client, tag):
        return tag, False
    log: list[str] = []
    try:
        with DockerSandbox(base, CHECK_LIMITS, client=client) as box:
            box.exec(f"mkdir -p {WORKSPACE}", timeout=60, user="0:0")
            box.container.put_archive(WORKSPACE, tree_tar(files))
            for command in commands:
                res = box.exec(command, timeout=900, workdir=WORKSPACE, user="0:0")
                log.append(f"$ {command}\n{res.text()}")
                if not res.ok:
                    atomic.write_text(logfile, "\n".join(log))
                    raise ImageError(f"making {repository} failed at `{command[:80]}`", logfile)
            repo, _, version = tag.rpartition(":")
            box.container.commit(repository=repo, tag=version, changes=list(CHANGES))
    except (APIError, DockerException, SandboxError) as exc:
        atomic.write_text(logfile, "\n".join([*log, str(exc)]))
        raise ImageError(f"making {repository} failed: {exc}", logfile) from exc
    atomic.write_text(logfile, "\n".join(log))
    return tag, True


def outside_workspace_removed(tops: list[str]) -> str:
    """Every copy of the project's packages outside the workspace removed from the start state:
    a release installed in the base (a Debian python3-* package a tool pulled in), vendored by
    another package, or left in the venv or the wheelhouse would be imported instead of the
    worker's code, and shows the removed feature. (Removed in the image's last layer: the
    worker sees no lower one.)"""
    script = asset("feature/feature_unshadow.py").decode()
    return f"{PYTHON} -I -c {shlex.quote(script)} {shlex.join(tops)} && rm -rf {WHEELS}"
