"""Dependencies, fetched on the host in the build stage and shipped in the build context.

Build containers get everything under DEPS (`<context>/deps`); cleanroom, filter and eval
never fetch anything. Per recipe kind:
- cargo: lock the crate if it ships no Cargo.lock, or a lock that pins crates newer than the
  image's rustc (for the image's rustc), then `cargo vendor` into DEPS/cargo/vendor with a
  CARGO_HOME config that points at it;
- go: no module proxy is reachable, so a module that imports packages of other modules
  must vendor them itself (`vendor/modules.txt`), or the build stops with that reason;
- python: a wheelhouse in DEPS/wheels with the build backend and every runtime
  dependency, for an offline `pip install --no-index`.
Results are cached by their inputs under `<cache>/deps/`.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from taskfoundry.builders import wheels
from taskfoundry.builders.detect_rust_go import builds_in_gopath
from taskfoundry.builders.pick import read
from taskfoundry.builders.recipe import Recipe
from taskfoundry.errors import BuildError
from taskfoundry.layout import DEPS
from taskfoundry.sources.crates import fits

log = logging.getLogger(__name__)

CARGO_CONFIG = f"""[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "{DEPS}/cargo/vendor"

[net]
offline = true
"""


@dataclass
class Deps:
    """What the dependency step put in the context: environment for the build, and notes."""

    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def prepare_deps(src: Path, recipe: Recipe, deps_dir: Path, cache: Path, rust_version: str) -> Deps:
    """Fetch what `recipe` needs for the tree at `src` (the context's copy) into `deps_dir`."""
    if recipe.coverage == "llvm" and (src / "Cargo.toml").exists():
        return _cargo(src, deps_dir, cache, rust_version)
    if recipe.coverage == "go" and (src / "go.mod").exists() and not builds_in_gopath(recipe, src):
        _go_check(src)  # (a Debian source builds in GOPATH mode over its packaged dependencies)
    if recipe.coverage == "python":
        return Deps(notes=wheels.wheelhouse(src, deps_dir / "wheels", cache / "deps"))
    return Deps()


def run(argv: list[str], cwd: Path | None, what: str) -> str:
    if shutil.which(argv[0]) is None:
        raise BuildError(f"{what} needs `{argv[0]}` on the host (not found)")
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"{what} failed: {' '.join(argv[:3])}...: {proc.stderr.strip()[-1500:]}")
    return proc.stdout


def _cargo(src: Path, deps_dir: Path, cache: Path, rust_version: str) -> Deps:
    lock = src / "Cargo.lock"
    notes = []
    if not lock.exists():
        _lock_for(src, rust_version)
    vendored = _vendor(src, cache)
    newer = _newer_than(vendored, rust_version) if vendored else []
    if newer:  # a shipped lock made with a newer rustc: lock again for the image's
        notes.append(f"cargo: Cargo.lock pinned {', '.join(newer[:3])}, newer than rustc {rust_version}")
        lock.unlink()
        _lock_for(src, rust_version)
        vendored = _vendor(src, cache)
    if vendored is None:
        return Deps(notes=["cargo: no registry dependencies"])
    shutil.copytree(vendored, deps_dir / "cargo" / "vendor", symlinks=True)
    (deps_dir / "cargo" / "config.toml").write_text(CARGO_CONFIG)
    crates = sum(1 for _ in vendored.iterdir())
    notes.append(f"cargo: {crates} crates vendored")
    return Deps(env={"CARGO_HOME": f"{DEPS}/cargo"}, notes=notes)


def _vendor(src: Path, cache: Path) -> Path | None:
    """`cargo vendor` of the locked crates, cached by the lock; None: no registry crates."""
    text = (src / "Cargo.lock").read_text()
    if 'source = "git+' in text:
        raise BuildError("Cargo.lock has git dependencies, which cannot be fetched here")
    if 'source = "registry+' not in text:
        return None
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    vendored = cache / "deps" / f"cargo-{key}"
    if not vendored.exists():
        tmp = vendored.with_name(vendored.name + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        argv = ["cargo", "vendor", "--locked", "--versioned-dirs", "--manifest-path", str(src / "Cargo.toml")]
        run([*argv, str(tmp)], None, "cargo vendor")
        tmp.rename(vendored)
    return vendored


def _newer_than(vendored: Path, rust_version: str) -> list[str]:
    """The vendored crates whose declared rust-version is newer than `rust_version`."""
    newer = []
    for manifest in sorted(vendored.glob("*/Cargo.toml")):
        match = re.search(r'^rust-version\s*=\s*"([\d.]+)"', read(manifest), re.M)
        if match and not fits(match[1], rust_version):
            newer.append(f"{manifest.parent.name} (rust {match[1]})")
    return newer


def _lock_for(src: Path, rust_version: str) -> None:
    """`cargo generate-lockfile` choosing versions the image's rustc can build.

    cargo's MSRV-aware resolver falls back to releases whose rust-version fits the
    package's own; a package that declares none is given the image's for the look-up.
    """
    manifest = src / "Cargo.toml"
    original = manifest.read_text()
    patched = original
    if not re.search(r"^rust-version\s*=", original, re.M):
        patched = re.sub(
            r"^\[package\]\s*$", f'[package]\nrust-version = "{rust_version}"', original, count=1, flags=re.M
        )
    try:
        manifest.write_text(patched)
        fallback = 'resolver.incompatible-rust-versions="fallback"'
        run(
            ["cargo", "generate-lockfile", "--manifest-path", str(manifest), "--config", fallback],
            None,
            "cargo generate-lockfile",
        )
    finally:
        manifest.write_text(original)


def _go_check(src: Path) -> None:
    """Stop early, with the reason, when the build would need the Go module proxy."""
    if (src / "vendor" / "modules.txt").exists():
        return
    match = re.search(r"^module\s+(\S+)", read(src / "go.mod"), re.M)
    module = match.group(1).strip('"') if match else ""
    external: set[str] = set()
    for path in src.rglob("*.go"):
        rel = path.relative_to(src).parts
        if path.name.endswith("_test.go") or {"vendor", "testdata"} & set(rel):
            continue
        for imp in _imports(read(path)):
            if "." in imp.split("/")[0] and not (imp == module or imp.startswith(module + "/")):
                external.add(imp)
    if external:
        shown = ", ".join(sorted(external)[:5]) + (" ..." if len(external) > 5 else "")
        raise BuildError(
            f"imports packages of other Go modules ({shown}) and has no vendor/ "
            "directory; the Go module proxy is not reachable from here",
        )


def _imports(text: str) -> list[str]:
    found = re.findall(r'^import\s+(?:[\w.]+\s+)?"([^"]+)"', text, re.M)
    for block in re.findall(r"^import\s*\((.*?)\)", text, re.M | re.S):
        found += re.findall(r'"([^"]+)"', block)
    return found
