"""What the shared stages (source, build) hand to the next: plain pydantic models, so Prefect
can persist them. A kind's own stages have theirs in `kinds/<kind>/results.py`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.builders.recipe import Recipe
from taskfoundry.models import UpstreamInfo


@dataclass(frozen=True)
class Outside:
    """What a stage result points at outside itself: a cached result whose image or directory
    is gone since (`docker rmi`, a deleted work dir) cannot be trusted, the stage runs again."""

    images: tuple[str, ...] = ()
    dirs: tuple[Path, ...] = ()


class SourceResult(BaseModel):
    path: Path
    owner: str
    repo: str
    commit: str
    source: str
    task_id: str
    upstream: UpstreamInfo | None = None


class BuildStage(BaseModel):
    base_image: str
    image: str
    built: bool
    recipe: Recipe
    build_sh: str
    gold_sha256: str
    log: Path
    toolchain_image: str = Field("", description="base + the recipe's packages (the base when none)")

    def outside(self) -> Outside:
        return Outside(images=(self.image, self.base_image, self.runtime_image))

    @property
    def program(self) -> str:
        """The program's name (what its docs call it)."""
        return self.recipe.program or Path(self.recipe.executable).name

    @property
    def runtime_image(self) -> str:
        """What the cleanroom starts from: the toolchain layer, so the program's runtime
        libraries (installed with the recipe's Debian packages) are present."""
        return self.toolchain_image or self.base_image
