"""The compiled workspace as a tar on the host: find and hash `./executable` in it."""

from __future__ import annotations

import hashlib
import posixpath
import tarfile
from pathlib import Path

from taskfoundry.grading.records import EvalStepError

_MAX_LINKS = 8
_RUNNABLE = (b"\x7fELF", b"#!")  # what execve runs; the evaluator sets the mode bits itself


def executable_sha256(archive: Path, name: str = "executable") -> str:
    """sha256 of `./<name>` in a tar of the workspace (members `./...`), following
    links that stay inside the workspace. EvalStepError when it is missing or no file."""
    with tarfile.open(archive, mode="r:") as tar:
        members = {_norm(m.name): m for m in tar.getmembers()}
        member = _resolve(members, name)
        handle = tar.extractfile(member)
        if handle is None:
            raise EvalStepError("executable_not_a_file", f"./{name} is not a regular file")
        digest = hashlib.sha256()
        head = handle.read(4)
        if not head.startswith(_RUNNABLE):
            raise EvalStepError(
                "executable_not_runnable", f"./{name} is neither a native (ELF) program nor a #! script"
            )
        digest.update(head)
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def executable_bytes(archive: Path, name: str = "executable") -> bytes:
    """The bytes of `./<name>` (following links inside the workspace); the archive's cap
    (the workspace's size) bounds them."""
    with tarfile.open(archive, mode="r:") as tar:
        members = {_norm(m.name): m for m in tar.getmembers()}
        handle = tar.extractfile(_resolve(members, name))
        return handle.read() if handle is not None else b""


def escaping_links(archive: Path) -> list[str]:
    """Links (symbolic or hard) whose relative target leads above the workspace root: the
    engine refuses to unpack them ("breakout"). Absolute targets stay in the container."""
    bad = []
    with tarfile.open(archive, mode="r:") as tar:
        for member in tar:
            if not (member.issym() or member.islnk()) or member.linkname.startswith("/"):
                continue
            base = "" if member.islnk() else posixpath.dirname(_norm(member.name))
            if _norm(posixpath.join(base, member.linkname)).startswith(".."):
                bad.append(member.name)
    return bad


def _resolve(members: dict[str, tarfile.TarInfo], name: str) -> tarfile.TarInfo:
    path = name
    for _ in range(_MAX_LINKS):
        member = members.get(path)
        if member is None:
            raise EvalStepError("no_executable", f"compile.sh did not produce ./{name} ({path} missing)")
        if member.isfile():
            return member
        if not member.issym():
            raise EvalStepError("executable_not_a_file", f"./{name} is not a regular file")
        target = member.linkname
        if target.startswith("/workspace/"):
            target = target[len("/workspace/") :]
        elif target.startswith("/"):
            raise EvalStepError("executable_outside_workspace", f"./{name} links to {target}")
        path = _norm(posixpath.join(posixpath.dirname(path), target))
        if path.startswith(".."):
            raise EvalStepError("executable_outside_workspace", f"./{name} links to {target}")
    raise EvalStepError("executable_not_a_file", f"./{name}: too many levels of links")


def _norm(name: str) -> str:
    norm = posixpath.normpath(name)
    return "" if norm == "." else norm
