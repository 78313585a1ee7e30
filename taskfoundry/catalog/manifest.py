"""`manifest.jsonl`: one line per file of a release (path, sha256, size), and its check."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, ValidationError

from taskfoundry import atomic
from taskfoundry.errors import ConfigError

MANIFEST = "manifest.jsonl"
CHUNK = 1 << 20


class ManifestEntry(BaseModel):
    path: str
    sha256: str
    size: int


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.relative_to(root).as_posix() != MANIFEST)


def write_manifest(root: Path) -> list[ManifestEntry]:
    """Hash every file under `root` (but the manifest itself) into `root/manifest.jsonl`."""
    entries = [
        ManifestEntry(path=p.relative_to(root).as_posix(), sha256=sha256_file(p), size=p.stat().st_size)
        for p in _files(root)
    ]
    atomic.write_text(root / MANIFEST, "".join(e.model_dump_json() + "\n" for e in entries))
    return entries


def read_manifest(root: Path) -> list[ManifestEntry]:
    path = root / MANIFEST
    try:
        lines = path.read_text().splitlines()
        return [ManifestEntry.model_validate_json(line) for line in lines if line.strip()]
    except (OSError, ValidationError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def check_manifest(root: Path) -> list[str]:
    """Every way the files under `root` differ from its manifest, one line each, file named."""
    entries = read_manifest(root)
    problems = []
    for entry in entries:
        path = root / entry.path
        if not path.is_file():
            problems.append(f"{entry.path}: missing")
        elif path.stat().st_size != entry.size or sha256_file(path) != entry.sha256:
            problems.append(f"{entry.path}: changed (sha256 differs from the manifest)")
    listed = {e.path for e in entries}
    problems += [
        f"{rel}: not in the manifest"
        for rel in (p.relative_to(root).as_posix() for p in _files(root))
        if rel not in listed
    ]
    return problems
