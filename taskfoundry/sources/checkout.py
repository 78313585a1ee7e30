"""What every source provider returns: a pinned checkout, and where registry code came from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from taskfoundry import naming


@dataclass(frozen=True)
class Upstream:
    """A registry release a checkout was made from (None for local paths and git URLs)."""

    registry: str  # "debian", "crates.io", "pypi"
    name: str
    version: str
    url: str  # the archive that was downloaded
    sha256: str  # of that archive, checked against the registry's own digest
    build_depends: tuple[str, ...] = ()  # packages its Debian packaging builds with
    programs: tuple[str, ...] = ()  # its Debian binary packages that ship a program


@dataclass(frozen=True)
class Checkout:
    """A source tree on disk, pinned: `commit` names exactly these files."""

    path: Path
    owner: str
    repo: str
    commit: str
    source: str
    upstream: Upstream | None = None

    @property
    def task_id(self) -> str:
        return naming.task_id(self.owner, self.repo, self.commit)


def slug(text: str) -> str:
    """A lower-case name safe in task ids, image names and paths."""
    return re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-.") or "repo"
