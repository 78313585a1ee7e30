"""In-memory tar archives for copying files into and out of containers."""

from __future__ import annotations

import functools
import io
import tarfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path


def renamed(member: tarfile.TarInfo, name: str) -> tarfile.TarInfo:
    """`member` named `name` when written again. A PAX `path` outranks the name as tarfile
    writes a member, and Docker's archives carry one for a name past 100 characters: dirsearch's
    charset_normalizer wheel kept its old place and the reference's offline install failed."""
    member.name = name
    member.pax_headers = {k: v for k, v in member.pax_headers.items() if k != "path"}
    return member


def tar_dir(src: Path, arcname: str) -> bytes:
    """Tar `src` (recursively) under the name `arcname`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(src), arcname=arcname)
    return buf.getvalue()


def tar_tree(entries: Mapping[str, Path]) -> bytes:
    """A tar of host files and directories, each at its destination (a relative path), owned
    by root with their modes and times kept, as a Dockerfile's `COPY` leaves them; missing
    parent directories are added (0755)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        made: set[str] = set()
        for dest, src in entries.items():
            parts = dest.split("/")
            for i in range(1, len(parts)):
                parent = "/".join(parts[:i])
                if parent not in made:
                    made.add(parent)
                    info = tarfile.TarInfo(parent)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(_as_copied(info, parent))
            tar.add(str(src), arcname=dest, filter=functools.partial(_as_copied, top=dest))
            made.add(dest)
    return buf.getvalue()


def _as_copied(info: tarfile.TarInfo, top: str) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if info.name == top and info.isdir():
        info.mode = 0o755  # COPY makes the destination directory itself 0755
    return info


def tar_file(data: bytes, name: str, mode: int = 0o644, uid: int = 0) -> bytes:
    """A tar with one regular file."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = mode
        info.uid = info.gid = uid
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def tar_files(files: Mapping[str, bytes], mode: int = 0o644) -> bytes:
    """A tar of `files` (name -> content), in the given order, all with `mode`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def join_chunks(chunks: Iterable[bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    for chunk in chunks:
        buf.write(chunk)
    buf.seek(0)
    return buf


def extract_one(chunks: Iterable[bytes]) -> bytes:
    """The content of the single regular file in a tar stream."""
    with tarfile.open(fileobj=join_chunks(chunks), mode="r") as tar:
        for member in tar:
            if member.isfile():
                handle = tar.extractfile(member)
                assert handle is not None
                return handle.read()
    raise FileNotFoundError("archive holds no regular file")


def extract_all(chunks: Iterable[bytes], dest: Path) -> None:
    """Extract a tar stream into `dest`, stripping the top directory the engine adds."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=join_chunks(chunks), mode="r") as tar:
        members = list(_strip_top(tar))
        tar.extractall(dest, members=members, filter="tar")


def _strip_top(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    for member in tar.getmembers():
        parts = member.name.split("/", 1)
        if len(parts) < 2 or not parts[1]:
            continue
        member.name = parts[1]
        yield member
