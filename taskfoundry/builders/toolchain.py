"""The toolchain layer: the base image plus the Debian packages a recipe needs.

base -> toolchain -> repository build. The toolchain's tag is a hash of its context
(a Dockerfile naming the base tag and the sorted packages), so recipes that need the
same packages share one image, and an existing tag is never rebuilt. Its context,
Dockerfile and log are kept under `<workdir>/toolchains/<hash>/`.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

import docker
from pydantic import BaseModel

from taskfoundry.images.run_layer import on_inputs, run_step_image


class Toolchain(BaseModel):
    image: str
    built: bool
    log: Path | None = None


def toolchain_dockerfile(base: str, packages: list[str], optional: list[str] | None = None) -> str:
    """The toolchain's Dockerfile: what names it (its hash is the tag) and its one RUN."""
    return on_inputs(base, toolchain_run(packages, optional))


def toolchain_run(packages: list[str], optional: list[str] | None = None) -> str:
    """`packages` must install; `optional` (a Debian source's Build-Depends, named for another
    suite) are installed where the base's suite has them: together if they can be, else each
    on its own, and those that fail are named in the log."""
    pkgs = " ".join(shlex.quote(p) for p in sorted(set(packages)))
    install = "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends"
    lines = [f" && {install} {pkgs} \\\n"] if packages else []
    if optional:
        names = " ".join(shlex.quote(p) for p in sorted(set(optional)))
        lines += [
            f" && tf_opt=$(for p in {names}; do "
            'apt-cache show "$p" >/dev/null 2>&1 && echo "$p"; done; true) \\\n',
            f' && {{ {install} $tf_opt || for p in $tf_opt; do {install} "$p" '
            '|| echo "== taskfoundry: build dependency $p not installed"; done; } \\\n',
        ]
    return "apt-get update \\\n" + "".join(lines) + " && rm -rf /var/lib/apt/lists/*"


def ensure_toolchain(
    client: docker.DockerClient,
    base: str,
    packages: list[str],
    workdir: Path,
    namespace: str,
    optional: list[str] | None = None,
) -> Toolchain:
    """The image to build in: `base` itself when no packages are needed."""
    if not packages and not optional:
        return Toolchain(image=base, built=False)
    run = toolchain_run(packages, optional)
    dockerfile = on_inputs(base, run)
    key = hashlib.sha256(dockerfile.encode()).hexdigest()[:16]
    builddir = workdir / "toolchains" / key
    context = builddir / "context"
    context.mkdir(parents=True, exist_ok=True)
    (context / "Dockerfile").write_text(dockerfile)
    log = builddir / "build.log"
    tag, built = run_step_image(client, base, run, context, f"{namespace}/toolchain", log)
    return Toolchain(image=tag, built=built, log=log)
