"""Build the cleanroom image: base + gold executable + docs + test assets + a fresh git repo.

The gold is mode 0111 (execute-only), or 0755 for a source-visible task (a script its
interpreter must read). Either way root owns it, so the worker cannot chmod it. /opt belongs to the worker:
ProgramBench's evaluator stashes the compiled executable there as the image's user.

ProgramBench's harnesses (mini-swe-agent's `--user agent`) run as `agent`: the layer's
/etc/passwd names the worker's uid again under that name, so what the harness's user may read
and run is the worker's, to the byte.

The workspace (its one anonymous commit made with git on the host) and the runtime data
go into one layer tar with owners and modes set in the tar, and the image is loaded from
it (`images.layer`): no container runs and nothing is committed.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import docker

from taskfoundry.errors import ImageError
from taskfoundry.images.build import image_exists, read_image_path
from taskfoundry.images.layer import load_layer_image
from taskfoundry.layout import REFERENCE_DIR, REFERENCE_EXECUTABLE, WORKSPACE
from taskfoundry.sandbox.tarutil import extract_one, renamed

__all__ = ["WORKSPACE", "build_cleanroom", "layer_roots", "workspace_layer"]

WORKER = (1000, 1000, "worker")
HOME = "/home/worker"
#: ProgramBench's harnesses' user: another name for the worker's uid, gid and home
AGENT = "agent"
PASSWD = "/etc/passwd"
_GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,  # the host's own git settings stay out of the repository
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "worker",
    "GIT_AUTHOR_EMAIL": "worker@localhost",
    "GIT_COMMITTER_NAME": "worker",
    "GIT_COMMITTER_EMAIL": "worker@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}
_VERSION = "3"  # of the layer's layout: part of the tag (2: the gold again at REFERENCE_EXECUTABLE,
# 3: the `agent` user)


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
    """Returns (tag, built). The workspace holds nothing but the docs, the test assets
    (workspace-relative path -> bytes) and the executable. `base` is the image to start
    from: the base, or the toolchain layer when the program needs its runtime libraries.
    `runtime_data`: a tar of installed data files, unpacked at /. The tag is a hash of
    all of these, so the same inputs are never loaded twice."""
    files = {**{rel: text.encode() for rel, text in docs.items()}, **(assets or {})}
    mode = 0o755 if source_visible else 0o111
    base_id = client.images.get(base).id
    tag = f"{repository}:{_inputs_hash(base_id, files, gold, mode, runtime_data)[:16]}"
    config = {"User": WORKER[2], "Env": _with_home(client, base), "WorkingDir": WORKSPACE}
    if image_exists(client, tag):
        return tag, False
    accounts = {PASSWD: with_agent(_image_file(client, base, PASSWD))}
    layer = workspace_layer(workdir / "workspace", files, gold, mode, runtime_data, accounts)
    return load_layer_image(client, base, layer, tag, config=config, comment="taskfoundry cleanroom")


def _inputs_hash(base_id: str, files: dict[str, bytes], gold: bytes, mode: int, runtime: bytes | None) -> str:
    digest = hashlib.sha256(f"{_VERSION}\0{base_id}\0{mode:o}\0".encode())
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    digest.update(b"gold\0" + hashlib.sha256(gold).digest())
    digest.update(b"runtime\0" + hashlib.sha256(runtime or b"").digest())
    return digest.hexdigest()


def _image_file(client: docker.DockerClient, image: str, path: str) -> bytes:
    found = read_image_path(client, image, path)
    if found is None:
        raise ImageError(f"{image} has no {path}")
    return extract_one([found])


def with_agent(passwd: bytes) -> bytes:
    """`passwd` with the `agent` user (the worker's uid, gid, home and shell) added once."""
    lines = passwd.decode().splitlines()
    if any(line.split(":", 1)[0] == AGENT for line in lines):
        return passwd
    uid, gid, _ = WORKER
    entry = f"{AGENT}:x:{uid}:{gid}:ProgramBench harness user, the worker's uid:{HOME}:/bin/bash"
    return "\n".join([*lines, entry, ""]).encode()


def _with_home(client: docker.DockerClient, base: str) -> list[str]:
    env = client.api.inspect_image(base).get("Config", {}).get("Env") or []
    return [e for e in env if not e.startswith("HOME=")] + [f"HOME={HOME}"]


def layer_roots(runtime_data: dict[str, bytes]) -> tuple[str, ...]:
    """Where `workspace_layer` writes (runtime data: absolute path -> bytes)."""
    return (WORKSPACE, "/opt", REFERENCE_DIR, PASSWD, *sorted(runtime_data))


def workspace_layer(
    scratch: Path,
    files: dict[str, bytes],
    gold: bytes,
    mode: int,
    runtime_data: bytes | None,
    accounts: dict[str, bytes] | None = None,
) -> bytes:
    """The layer tar: /workspace (files, .gitignore, the one commit) owned by the worker,
    the gold root's with `mode` (in the workspace and at REFERENCE_EXECUTABLE, in a directory
    of root's), /opt the worker's, the runtime data root's at its paths, `accounts` (absolute
    path -> bytes: /etc/passwd with `agent`) root's and 0644."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for rel, data in files.items():
        path = scratch / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (scratch / ".gitignore").write_text("executable\n")
    _commit(scratch)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _worker_dir(tar, "opt")
        tar.add(scratch, arcname=WORKSPACE.strip("/"), filter=_as_worker)
        _root_dir(tar, REFERENCE_DIR.strip("/"))
        for name in (f"{WORKSPACE.strip('/')}/executable", REFERENCE_EXECUTABLE.strip("/")):
            gold_info = tarfile.TarInfo(name)
            gold_info.size, gold_info.mode, gold_info.mtime = len(gold), mode, 0
            tar.addfile(gold_info, io.BytesIO(gold))
        if runtime_data:
            _add_runtime(tar, runtime_data)
        for where, data in sorted((accounts or {}).items()):
            info = tarfile.TarInfo(where.strip("/"))
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _commit(repo: Path) -> None:
    env = {**os.environ, **_GIT_ENV}
    for cmd in (
        ["git", "init", "-q", "-b", "main", "--template="],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "Initial commit"],
    ):
        res = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise ImageError(f"cleanroom workspace: {' '.join(cmd)} failed: {res.stderr.strip()[-500:]}")


def _as_worker(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid, info.gid = WORKER[0], WORKER[1]
    info.uname = info.gname = WORKER[2]
    return info


def _worker_dir(tar: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
    tar.addfile(_as_worker(info))


def _root_dir(tar: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
    info.uname = info.gname = "root"
    tar.addfile(info)


def _add_runtime(tar: tarfile.TarFile, runtime_data: bytes) -> None:
    """The runtime data's files, root's and 0644 as `runtime.runtime_tar` made them. A
    missing parent directory is made root's and 0755 by the engine, as `ADD` made it."""
    with tarfile.open(fileobj=io.BytesIO(runtime_data), mode="r") as src:
        for member in src:
            handle = src.extractfile(member) if member.isfile() else None
            if handle is None:
                continue
            renamed(member, member.name.lstrip("./"))
            member.uid = member.gid = 0
            member.uname = member.gname = "root"
            tar.addfile(member, handle)
