"""What the repository's test suite needs installed, read from its metadata.

Build requirements (PEP 518), runtime requirements and the test extras (`test`, `tests`,
`testing`) from the project's own metadata (a wheel built on the host), PEP 735
dependency groups of the same names, requirement files named for tests, and
`feature: {test_requires: [...]}` in `taskfoundry.yaml`. Markers are evaluated for the
image's Python, so what is listed is what the image installs.
"""

from __future__ import annotations

import email.parser
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import yaml
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement

from taskfoundry.builders.detect_python import build_requires
from taskfoundry.builders.pick import read
from taskfoundry.builders.recipe import RECIPE_FILE
from taskfoundry.errors import BuildError

TEST_EXTRAS = ("test", "tests", "testing")
REQUIREMENT_FILES = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "test-requirements.txt",
    "tests/requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    # development lists often hold the test plugins too (pytest-cov's marks, hypothesis); what
    # has no wheel for the image (linters pinned for other Pythons) is left out, with a note
    "requirements-dev.txt",
    "dev-requirements.txt",
    "requirements/dev.txt",
)
# the runner, the per-test timeout, and what hatchling asks for an editable install (pip does
# not fetch it without build isolation)
ALWAYS = ("pytest", "pytest-timeout", "editables")
IMAGE_ENV = {
    "python_version": "3.13",
    "python_full_version": "3.13.5",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}


def declared(repo: Path) -> dict[str, Any]:
    """The `feature:` section of the repository's taskfoundry.yaml ({} without one)."""
    path = repo / RECIPE_FILE
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise BuildError(f"{RECIPE_FILE}: cannot read ({exc})") from exc
    section = data.get("feature") if isinstance(data, dict) else None
    return section if isinstance(section, dict) else {}


def test_requirements(repo: Path, extra: list[str]) -> list[str]:
    """Every requirement, deduplicated, in a stable order."""
    found = [*ALWAYS, *build_requires(repo)]
    with tempfile.TemporaryDirectory(prefix="tf-feature-meta-") as tmp:
        found += _from_metadata(repo, Path(tmp))
    found += _groups(repo)
    for name in REQUIREMENT_FILES:
        found += _requirement_file(repo / name)
    found += [str(r) for r in declared(repo).get("test_requires", [])] + list(extra)
    found += settings_plugins(repo)
    seen: dict[str, str] = {}
    for line in found:
        req = _parse(line)
        if req is not None and req.lower() not in seen:
            seen[req.lower()] = req
    return list(seen.values())


# options a project's pytest settings (`addopts`) may name, and the plugin that defines each:
# without it pytest stops at "unrecognized arguments" before any test runs (parse: `--cov`)
OPTION_PLUGINS = {
    "--cov": "pytest-cov",
    "--no-cov": "pytest-cov",
    "-n": "pytest-xdist",
    "--numprocesses": "pytest-xdist",
    "--dist": "pytest-xdist",
    "--benchmark": "pytest-benchmark",
    "--reruns": "pytest-rerunfailures",
    "--randomly": "pytest-randomly",
    "-p randomly": "pytest-randomly",
    "--asyncio-mode": "pytest-asyncio",
    "--hypothesis": "hypothesis",
    "--mypy": "pytest-mypy",
    "--ruff": "pytest-ruff",
    "--flake8": "pytest-flake8",
    "--black": "pytest-black",
    "--isort": "pytest-isort",
    "--mpl": "pytest-mpl",
}


def addopts(repo: Path) -> str:
    """The `addopts` of the project's pytest settings (pytest.ini, pyproject.toml, tox.ini,
    setup.cfg: the first that has a pytest section, as pytest reads them), '' without."""
    import configparser

    for name, section in (
        ("pytest.ini", "pytest"),
        ("pyproject.toml", ""),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        path = repo / name
        if not path.is_file():
            continue
        if name == "pyproject.toml":
            try:
                tool = tomllib.loads(path.read_text(errors="replace")).get("tool", {}).get("pytest", {})
            except tomllib.TOMLDecodeError:
                continue
            if not isinstance(tool, dict) or not tool:
                continue
            value = tool.get("ini_options", {}).get("addopts", tool.get("addopts", ""))
            return " ".join(value) if isinstance(value, list) else str(value)
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(path.read_text(errors="replace"))
        except configparser.Error:
            continue
        if parser.has_section(section):
            return parser.get(section, "addopts", fallback="")
    return ""


def settings_plugins(repo: Path) -> list[str]:
    """The plugins whose options the project's pytest settings use."""
    opts = " ".join(addopts(repo).split())
    words = opts.split(" ")
    found = []
    for option, plugin in OPTION_PLUGINS.items():
        if " " in option:
            hit = option in opts
        else:
            hit = any(w == option or w.startswith((f"{option}=", f"{option}-")) for w in words)
        if hit and plugin not in found:
            found.append(plugin)
    return found


def _parse(line: str) -> str | None:
    """A requirement without its marker, or None when it does not apply to the image."""
    try:
        req = Requirement(line)
    except InvalidRequirement:
        return None
    if req.marker is not None and not any(
        req.marker.evaluate(IMAGE_ENV | {"extra": e}) for e in ("", *TEST_EXTRAS)
    ):
        return None
    if req.url:
        return None  # a direct URL cannot be fetched into the wheelhouse
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"


def _from_metadata(repo: Path, tmp: Path) -> list[str]:
    """Requires-Dist of the project's wheel (no extras, or a test extra)."""
    out, copy = tmp / "wheel", tmp / "src"
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(out),
            str(copy),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    wheel = next(out.glob("*.whl"), None)
    if proc.returncode != 0 or wheel is None:
        raise BuildError(f"cannot build the project's wheel to read its requirements: {proc.stderr[-1500:]}")
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(zf.read(name).decode())
    kept = []
    for line in meta.get_all("Requires-Dist") or []:
        try:
            marker = Requirement(line).marker
        except InvalidRequirement:
            continue
        if marker is None or _wanted(marker):
            kept.append(line)
    return kept


def _wanted(marker: Marker) -> bool:
    return any(marker.evaluate(IMAGE_ENV | {"extra": e}) for e in ("", *TEST_EXTRAS))


def _groups(repo: Path) -> list[str]:
    """PEP 735 dependency groups named for tests (include-group entries followed)."""
    try:
        groups = tomllib.loads(read(repo / "pyproject.toml")).get("dependency-groups", {})
    except tomllib.TOMLDecodeError:
        return []

    def expand(name: str, seen: set[str]) -> list[str]:
        if name in seen or name not in groups:
            return []
        seen.add(name)
        out: list[str] = []
        for item in groups[name]:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and "include-group" in item:
                out += expand(str(item["include-group"]), seen)
        return out

    return [r for g in TEST_EXTRAS for r in expand(g, set())]


def _requirement_file(path: Path) -> list[str]:
    lines = []
    for raw in read(path).splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            lines.append(line)
    return lines
