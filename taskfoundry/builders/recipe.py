"""Build recipes: detected from the tree, or declared in `taskfoundry.yaml` (which wins).

Detectors are tried in order (cargo, go, cmake, meson, autotools, make, python); the
first that recognises the tree gives the recipe, and any field the YAML declares
replaces the detected one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from taskfoundry.errors import StageError
from taskfoundry.models import load_yaml_model

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
    source_visible: bool = Field(
        False,
        description="the gold program is a script its interpreter must read (mode 0755, "
        "not 0111): a worker can read its source",
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


#: A detector: (repository, executable asked for, package name) -> recipe, or None if not its kind.
Detector = Callable[[Path, str | None, str | None], Recipe | None]


def detectors() -> list[tuple[str, Detector]]:
    from taskfoundry.builders import detect_c, detect_python, detect_rust_go

    return [
        ("cargo", detect_rust_go.cargo),
        ("go", detect_rust_go.go),
        ("cmake", detect_c.cmake),
        ("meson", detect_c.meson),
        ("autotools", detect_c.autotools),
        ("make", detect_c.make),
        ("python", detect_python.python_project),
    ]


def detect_recipe(repo: Path, executable: str | None = None, package: str | None = None) -> Recipe:
    """Pick a recipe for `repo`, then apply its `taskfoundry.yaml`, if any.

    `executable` names the program to build when there are several (it wins over the
    YAML's `executable`); otherwise the one named like `package` (the registry or
    repository name) or like the build system's project is taken. In a declared
    recipe with no detected build system, `executable` is the gold program's path.
    """
    declared = declared_recipe(repo)
    exe = executable or declared.executable
    detected = None
    for _name, detector in detectors():
        detected = detector(repo, exe, package)
        if detected:
            break
    fields = declared.model_dump(exclude_none=True)
    if detected is not None:
        fields.pop("executable", None)  # the detector used it to pick the program (and its path)
    if detected is None:
        try:
            return Recipe(**{"kind": "declared", "language": "unknown", **fields})
        except ValueError as exc:
            names = ", ".join(name for name, _ in detectors())
            raise StageError(
                "build", f"{repo.name}: no build system detected ({names}) and no complete {RECIPE_FILE}"
            ) from exc
    return detected.model_copy(update=fields)


def declared_recipe(repo: Path) -> RecipeFile:
    """The repository's `taskfoundry.yaml` (validated: a bad field is a ConfigError naming it)."""
    path = repo / RECIPE_FILE
    return load_yaml_model(path, RecipeFile) if path.exists() else RecipeFile()
