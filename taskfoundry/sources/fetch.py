"""HTTP for registry sources (stdlib urllib): JSON look-ups, checked downloads, safe unpacking."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from taskfoundry.errors import SourceError, SourceUnavailable

log = logging.getLogger(__name__)

USER_AGENT = "taskfoundry/0.1 (benchmark task builder; https://github.com/taskfoundry)"
TIMEOUT = 60.0


def _open(url: str, timeout: float = TIMEOUT, headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    try:
        return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 - registry URLs
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise SourceUnavailable(f"not available: {url} (404 Not Found)") from exc
        raise SourceError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        raise SourceError(f"{url}: {exc}") from exc


def get_bytes(url: str, timeout: float = TIMEOUT, headers: dict[str, str] | None = None) -> bytes:
    """The body of a GET (`headers` for e.g. `Range` or `Accept`); a 404 is `SourceUnavailable`."""
    try:
        with _open(url, timeout, headers) as response:
            data: bytes = response.read()
    except (TimeoutError, OSError) as exc:  # a read that stalls past the timeout
        raise SourceError(f"{url}: {exc}") from exc
    return data


def get_json(url: str) -> Any:
    try:
        return json.loads(get_bytes(url))
    except json.JSONDecodeError as exc:
        raise SourceError(f"{url}: not JSON ({exc})") from exc


def download(url: str, dest: Path, sha256: str) -> Path:
    """Fetch `url` to `dest` unless a copy with the right digest is there; check the digest."""
    if dest.exists() and _sha256(dest) == sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(prefix=".dl-", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out, _open(url) as response:
            shutil.copyfileobj(response, out)
        got = _sha256(Path(part))
        if got != sha256:
            raise SourceError(f"{url}: sha256 {got} does not match the registry's {sha256}")
        os.replace(part, dest)
    finally:
        Path(part).unlink(missing_ok=True)
    log.info("downloaded %s", url)
    return dest


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack a .tar.* / .crate / .zip into `dest` (which must not exist), dropping a single
    top-level directory and any `.git` entries; refuses paths that escape `dest`."""
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest.parent))
    try:
        raw = tmp / "raw"
        if archive.name.endswith(".zip"):
            _unzip(archive, raw)
        else:
            _untar(archive, raw)
        entries = list(raw.iterdir())
        top = entries[0] if len(entries) == 1 and entries[0].is_dir() else raw
        top.rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _untar(archive: Path, raw: Path) -> None:
    try:
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if ".git" not in Path(m.name).parts]
            tar.extractall(raw, members=members, filter=_own)
    except (tarfile.TarError, OSError) as exc:
        raise SourceError(f"cannot unpack {archive.name}: {exc}") from exc


def _own(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """The `tar` filter, and no chown: the files belong to whoever unpacks them."""
    return tarfile.tar_filter(member, dest).replace(uid=None, gid=None, uname=None, gname=None)  # type: ignore[arg-type]


def _unzip(archive: Path, raw: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                parts = Path(info.filename).parts
                if ".git" in parts or info.filename.startswith("/") or ".." in parts:
                    continue
                zf.extract(info, raw)
                mode = info.external_attr >> 16
                if mode & 0o111 and not info.is_dir():
                    (raw / info.filename).chmod(0o755)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceError(f"cannot unpack {archive.name}: {exc}") from exc
