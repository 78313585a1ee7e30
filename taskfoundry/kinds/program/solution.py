"""solution.tar.gz: the reference submission, so anyone can check a task with `taskfoundry eval`.

The pinned source tree (tracked files at the task's commit, no history), its vendored
dependencies (what the build stage fetched into DEPS, shipped as `.tf-deps/` because
eval compiles with no network) and a `compile.sh` made from `build.sh` with DEPS
pointing at that copy.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import docker
from docker.errors import APIError

from taskfoundry.errors import SandboxError
from taskfoundry.images.build import read_image_path
from taskfoundry.layout import DEPS
from taskfoundry.sandbox.tarutil import renamed

DEPS_DIR = ".tf-deps"
_HEADER = """#!/bin/sh
# The reference submission of this task: the build recipe (build.sh) with its dependencies
# read from ./{deps} (vendored at build time; eval compiles with no network).
set -e
TF_DEPS="$(pwd)/{deps}"
if [ -d "$TF_DEPS" ]; then
  find "$TF_DEPS" -name '*.toml' -type f -exec sed -i "s#{root}#$TF_DEPS#g" {{}} +
fi
"""


# Reproducible builds (Go, Rust) rebuild the gold bit for bit, and the evaluator refuses a byte
# copy of the gold (`gold_executable`). Trailing bytes change nothing an ELF loader or a script's
# interpreter reads, so the reference marks its own build with them.
_MARK = "printf '\\n# taskfoundry reference build\\n' >> ./executable\n"


def compile_script(build_sh: str, env: dict[str, str]) -> str:
    """`build.sh` with every DEPS path moved to the workspace's copy; `env`: the build image's
    variables that name DEPS (CARGO_HOME, ...), exported the same way."""
    body = build_sh.removeprefix("#!/bin/sh\n").replace(DEPS, "$TF_DEPS")
    body = "\n".join(line for line in body.splitlines() if line.strip() != "set -e")
    exports = "".join(
        f'export {k}="{v.replace(DEPS, "$TF_DEPS")}"\n' for k, v in sorted(env.items()) if DEPS in v
    )
    return _HEADER.format(deps=DEPS_DIR, root=DEPS) + exports + body + "\n" + _MARK


def image_env(client: docker.DockerClient, image: str) -> dict[str, str]:
    """The ENV of an image, as a dict."""
    try:
        pairs = client.images.get(image).attrs["Config"].get("Env") or []
    except APIError as exc:
        raise SandboxError(f"cannot inspect {image}: {exc}") from exc
    return dict(p.split("=", 1) for p in pairs if "=" in p)


def solution_tarball(tree: Path, compile_sh: str, deps: bytes | None) -> bytes:
    """gzip tar: the checkout at `tree` (no .git), `.tf-deps/` (a tar of DEPS) and compile.sh."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as dst:
        for path in sorted(tree.rglob("*")):
            rel = path.relative_to(tree)
            if rel.parts[0] == ".git" or rel.as_posix() == "compile.sh":
                continue
            dst.add(str(path), arcname=rel.as_posix(), recursive=False, filter=_anonymous)
        if deps:
            _copy_members(deps, dst, prefix=f"{DEPS_DIR}/")
        info = tarfile.TarInfo("compile.sh")
        data = compile_sh.encode()
        info.size, info.mode = len(data), 0o755
        dst.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _copy_members(tar: bytes, dst: tarfile.TarFile, prefix: str) -> None:
    with tarfile.open(fileobj=io.BytesIO(tar)) as src:
        for member in src.getmembers():
            name = member.name.removeprefix("./").strip("/")
            if not name:
                continue
            dst.addfile(
                _anonymous(renamed(member, prefix + name)),
                src.extractfile(member) if member.isfile() else None,
            )


def image_deps(client: docker.DockerClient, image: str) -> bytes | None:
    """The build image's DEPS as a tar (names relative to DEPS), None when it has none."""
    return read_image_path(client, image, f"{DEPS}/.")
