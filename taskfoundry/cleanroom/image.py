"""Build the cleanroom image: base + gold executable + docs + test assets + a fresh git repo.

The gold is mode 0111 (execute-only), or 0755 for a source-visible task (a script its
interpreter must read). Either way root owns it, so the worker cannot chmod it. /opt belongs to the worker:
ProgramBench's evaluator stashes the compiled executable there as the image's user.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import docker

from taskfoundry.builders.layout import WORKSPACE
from taskfoundry.images.build import build_image

__all__ = ["WORKSPACE", "build_cleanroom"]

_DOCKERFILE = """\
FROM {base}
{runtime}COPY workspace {ws}
COPY executable {ws}/executable
RUN cd {ws} && printf 'executable\\n' > .gitignore \\
 && git init -q -b main && git add -A \\
 && GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \\
    git -c user.name=worker -c user.email=worker@localhost commit -q -m 'Initial commit' \\
 && chown -R worker:worker {ws} \\
 && chown root:root {ws}/executable && chmod {mode} {ws}/executable \\
 && chown worker:worker /opt
USER worker
ENV HOME=/home/worker
WORKDIR {ws}
"""


def build_cleanroom(
    client: docker.DockerClient,
    base: str,
    gold: bytes,
    docs: dict[str, str],
    workdir: Path,
    repository: str,
    *,
    source_visible: bool = False,
    assets: dict[str, bytes] | None = None,
    runtime_data: bytes | None = None,
) -> tuple[str, bool]:
    """Returns (tag, built). The context holds nothing but the docs, the test assets
    (workspace-relative path -> bytes) and the executable. `base` is the image to start
    from: the base, or the toolchain layer when the program needs its runtime libraries.
    `runtime_data`: a tar of installed data files, unpacked at /."""
    context = workdir / "context"
    shutil.rmtree(context, ignore_errors=True)
    files = {**{rel: text.encode() for rel, text in docs.items()}, **(assets or {})}
    for rel, data in files.items():
        path = context / "workspace" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (context / "workspace").mkdir(parents=True, exist_ok=True)
    (context / "executable").write_bytes(gold)
    (context / "executable").chmod(0o755)
    if runtime_data:
        (context / "runtime-data.tar").write_bytes(runtime_data)
    (context / "Dockerfile").write_text(
        _DOCKERFILE.format(
            base=base,
            ws=WORKSPACE,
            mode="0755" if source_visible else "0111",
            runtime="ADD runtime-data.tar /\n" if runtime_data else "",
        )
    )
    return build_image(client, context, repository, workdir / "build.log")
