"""Runtime data: what the program's own install puts under share/ (figlet's fonts).

A program that reads data files at a compiled-in path (`/usr/local/share/figlet`) fails in
a cleanroom that has only its executable. The build stages the project's install with
DESTDIR (`builders/build.py`, `/task/runtime-data.tar`); the cleanroom gets the same files
at the same paths, minus anything that is code, and the leak scan is told they are there
on purpose (path and sha256), as it is for test assets.
"""

from __future__ import annotations

import hashlib
import io
import tarfile

from taskfoundry.kinds.program.cleanroom.assets import classify
from taskfoundry.layout import MANUAL_DIRS, RUNTIME_TAR

__all__ = ["RUNTIME_TAR", "allowed", "runtime_files", "runtime_tar"]
# what classify() calls code or build material: never shipped, even as installed data
_CODE = {"source", "script", "artifact", "parses_as_source", "build_file"}


def runtime_files(tar_bytes: bytes, max_bytes: int = 64 << 20) -> dict[str, bytes]:
    """Absolute path -> bytes of the staged data files a worker may see."""
    files: dict[str, bytes] = {}
    total = 0
    with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r") as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is None:
                continue
            data = handle.read()
            path = "/" + member.name.lstrip("./")
            total += len(data)
            # manuals may quote the source (lzip.info's reference decoder); the worker's docs
            # come from collect_docs, code blocks removed
            if MANUAL_DIRS & set(path.split("/")[:-1]):
                continue
            if total > max_bytes or classify(path.lstrip("/"), data) in _CODE:
                continue
            files[path] = data
    return files


def runtime_tar(files: dict[str, bytes]) -> bytes:
    """A tar of `files` with fixed owner, mode and time: the same files, the same bytes, so
    the cleanroom's content-addressed tag does not change between builds."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode, info.mtime = len(files[path]), 0o644, 0
            tar.addfile(info, io.BytesIO(files[path]))
    return out.getvalue()


def allowed(files: dict[str, bytes]) -> dict[str, str]:
    return {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
