"""Recipe detection: the first detector that recognises the tree, then the YAML's fields.

Detectors are tried in order (cargo, go, cmake, meson, autotools, make, python); the
first that recognises the tree gives the recipe, and any field `taskfoundry.yaml`
declares replaces the detected one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from taskfoundry.builders import detect_c, detect_python, detect_rust_go
from taskfoundry.builders.recipe import RECIPE_FILE, Recipe, RecipeFile
from taskfoundry.errors import NoBuildSystem
from taskfoundry.models import load_yaml_model

#: A detector: (repository, executable asked for, package name) -> recipe, or None if not its kind.
Detector = Callable[[Path, str | None, str | None], Recipe | None]


def detectors() -> list[tuple[str, Detector]]:
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
            raise NoBuildSystem(
                f"{repo.name}: no build system detected ({names}) and no complete {RECIPE_FILE}"
            ) from exc
    return detected.model_copy(update=fields)


def declared_recipe(repo: Path) -> RecipeFile:
    """The repository's `taskfoundry.yaml` (validated: a bad field is a ConfigError naming it)."""
    path = repo / RECIPE_FILE
    return load_yaml_model(path, RecipeFile) if path.exists() else RecipeFile()
