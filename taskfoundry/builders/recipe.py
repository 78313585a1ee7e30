"""The build recipe of one repository, and the `taskfoundry.yaml` that declares one.

Plain models: detection (`builders.detect`) and the detectors import them, never the
other way round.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

CoverageKind = Literal["gcov", "llvm", "go", "python", "none"]
RECIPE_FILE = "taskfoundry.yaml"


class Recipe(BaseModel):
    """How to build one repository. Commands run with `sh -e` in the repository root."""

    kind: str = Field(description="cargo, go, cmake, meson, autotools, make, python, declared, agent")
    language: str
    build: list[str] = Field(description="commands that build the gold executable")
    coverage_build: list[str] = Field(description="the same build, instrumented for coverage")
    executable: str = Field(description="gold executable, relative to the repository root")
    coverage_executable: str = Field(description="instrumented executable, relative path")
    coverage: CoverageKind = "none"
    packages: list[str] = Field(default_factory=list, description="Debian packages to install")
    build_depends: list[str] = Field(
        default_factory=list,
        description="Debian packages the source's own Debian packaging builds with, from another "
        "suite than the base's: installed where the base's suite has them",
    )
    source_visible: bool = Field(
        False,
        description="the gold program is a script its interpreter must read (mode 0755, "
        "not 0111): a worker can read its source",
    )
    program: str | None = Field(
        None,
        description="the program's own name where the build copies it to `executable` (cmake, "
        "meson, autotools): what its docs, man pages and tests call it",
    )
    entry_point: str | None = Field(
        None,
        description="a Python program's console script, module:function (what the project's "
        "own tests call in-process: the harvest records those calls)",
    )


class RecipeFile(BaseModel):
    """The per-repository YAML: any field given overrides the detected recipe."""

    model_config = {"extra": "forbid"}

    kind: str | None = None
    language: str | None = None
    build: list[str] | None = None
    coverage_build: list[str] | None = None
    executable: str | None = None
    coverage_executable: str | None = None
    coverage: CoverageKind | None = None
    packages: list[str] | None = None
    source_visible: bool | None = None
