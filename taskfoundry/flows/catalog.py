"""The refresh catalog: candidate sources, each with optional overrides and a release date.

A YAML list; an item is a SOURCE string or a mapping:

    - examples/csvq                       # a path (relative to this file), a git URL, ...
    - crate:ripgrep                       # ... or a registry source (debian:, crate:, pypi:)
    - source: https://example.org/x.git#v1.2
      executable: x                       # which built program is the task's
      recipe: {packages: [libz-dev]}      # fields of taskfoundry.yaml, over the repo's own
      released_at: 2024-05-01             # upstream release date, when the source can't tell
"""

from __future__ import annotations

import subprocess
from datetime import date, datetime, time
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

from taskfoundry.builders.recipe import RecipeFile
from taskfoundry.config import Config
from taskfoundry.errors import ConfigError


class CatalogEntry(BaseModel):
    model_config = {"extra": "forbid"}

    source: str
    executable: str | None = None
    recipe: RecipeFile | None = None
    released_at: datetime | None = Field(None, description="upstream release date, if known")

    @field_validator("released_at", mode="before")
    @classmethod
    def _date_is_midnight(cls, value: object) -> object:
        if isinstance(value, date) and not isinstance(value, datetime):
            return datetime.combine(value, time.min)
        return value

    def apply(self, config: Config) -> Config:
        """The run's config with this entry's overrides."""
        updates = {k: v for k, v in (("executable", self.executable), ("recipe", self.recipe)) if v}
        return config.model_copy(update=updates) if updates else config


def absolute_source(source: str, base: Path) -> str:
    """A relative path that exists next to the catalog becomes absolute; anything else stays."""
    candidate = base / source
    if ":" not in source and not Path(source).is_absolute() and candidate.exists():
        return str(candidate.resolve())
    return source


def load_catalog(path: Path) -> list[CatalogEntry]:
    try:
        data = yaml.safe_load(path.read_text()) or []
        if not isinstance(data, list):
            raise ConfigError(f"{path}: a catalog is a YAML list of sources")
        items = [{"source": item} if isinstance(item, str) else item for item in data]
        entries = [CatalogEntry.model_validate(item) for item in items]
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return [e.model_copy(update={"source": absolute_source(e.source, path.parent)}) for e in entries]


def candidates(config: Config, catalog: Path | None = None) -> list[CatalogEntry]:
    """The catalog's entries, then `refresh.sources` not already listed (first one wins)."""
    refresh = config.orchestration.refresh
    path = catalog or refresh.catalog
    entries = load_catalog(path) if path else []
    entries += [CatalogEntry(source=s) for s in refresh.sources]
    seen: set[str] = set()
    unique = []
    for entry in entries:
        if entry.source not in seen:
            seen.add(entry.source)
            unique.append(entry)
    return unique


def git_date(path: Path) -> datetime | None:
    """Date of the last commit touching `path`, if it is inside a git work tree."""
    if not path.is_dir():
        return None
    proc = subprocess.run(
        ["git", "log", "-1", "--format=%cI", "--", "."], cwd=path, capture_output=True, text=True, check=False
    )
    text = proc.stdout.strip()
    return datetime.fromisoformat(text) if proc.returncode == 0 and text else None


def release_date(entry: CatalogEntry, checkout: Path) -> datetime | None:
    """The catalog's date, else the commit date of the pinned checkout or of the local source."""
    if entry.released_at:
        return entry.released_at
    return git_date(checkout) or git_date(Path(entry.source))
