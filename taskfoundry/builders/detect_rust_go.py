"""Detectors for cargo (Rust) and go modules."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from taskfoundry.builders.pick import choose, read
from taskfoundry.builders.recipe import Recipe
from taskfoundry.builders.static import cargo_lines
from taskfoundry.errors import BuildError


def cargo(repo: Path, exe: str | None, package: str | None) -> Recipe | None:
    manifest = repo / "Cargo.toml"
    if not manifest.exists():
        return None
    data = _toml(manifest)
    bins: list[str] = []
    for member in [repo, *_members(repo, data)]:
        bins += cargo_bins(member, _toml(member / "Cargo.toml") if member != repo else data)
    own = data.get("package", {}).get("name")
    name = choose(bins, exe, [package, own], "Cargo.toml")
    flags = f"--offline --locked --bin {name}"
    crates = lock_crates(read(repo / "Cargo.lock"))
    return Recipe(
        kind="cargo",
        language="rust",
        coverage="llvm",
        build=cargo_lines(flags, name, static_modules(crates)),
        coverage_build=[f"RUSTFLAGS='-C instrument-coverage' cargo build {flags} --target-dir target/cov"],
        executable=f"target/release/{name}",
        coverage_executable=f"target/cov/debug/{name}",
        packages=sys_packages(crates),
    )


# -sys crates that link a system library and find it with pkg-config, and the Debian package
# with its headers (ripcalc: "openssl-sys: Could not find directory of OpenSSL installation").
# Crates that build a bundled copy when the library is missing (libz-sys, zstd-sys) are absent.
SYS_PACKAGES = {
    "openssl-sys": "libssl-dev",
    "libsqlite3-sys": "libsqlite3-dev",
    "curl-sys": "libcurl4-openssl-dev",
    "libdbus-sys": "libdbus-1-dev",
    "alsa-sys": "libasound2-dev",
    "libudev-sys": "libudev-dev",
    "pq-sys": "libpq-dev",
    "libsodium-sys": "libsodium-dev",
    "libseccomp-sys": "libseccomp-dev",
    "libusb1-sys": "libusb-1.0-0-dev",
    "glib-sys": "libglib2.0-dev",
    "cairo-sys-rs": "libcairo2-dev",
    "pango-sys": "libpango1.0-dev",
    "gtk-sys": "libgtk-3-dev",
    "gtk4-sys": "libgtk-4-dev",
    "yeslogic-fontconfig-sys": "libfontconfig-dev",
    "pcap": "libpcap-dev",
    "clang-sys": "libclang-dev",
}


# -sys crates whose static library needs others it does not name, for the static gold: the
# pkg-config module that names them, and their Debian packages. Debian's libcrypto.a is built
# with zlib and zstd (ripcalc: "undefined reference to `ZSTD_initCStream'"; the gold was then
# built again, dynamic, and the cleanroom warned that the worker could instrument it)
STATIC_NEEDS = {"openssl-sys": ("openssl", ("zlib1g-dev", "libzstd-dev"))}


def lock_crates(lock: str) -> set[str]:
    """The names of the crates a Cargo.lock's text holds."""
    return set(re.findall(r'^name = "([\w.-]+)"', lock, re.M))


def sys_packages(crates: set[str]) -> list[str]:
    """Debian packages for the -sys crates of a Cargo.lock (`SYS_PACKAGES`, `STATIC_NEEDS`)."""
    extra = {pkg for crate, (_, pkgs) in STATIC_NEEDS.items() if crate in crates for pkg in pkgs}
    return sorted({pkg for crate, pkg in SYS_PACKAGES.items() if crate in crates} | extra)


def static_modules(crates: set[str]) -> tuple[str, ...]:
    """The pkg-config modules whose static libraries the static gold links in full."""
    return tuple(module for crate, (module, _) in STATIC_NEEDS.items() if crate in crates)


def cargo_bins(crate: Path, data: dict[str, Any]) -> list[str]:
    """Binary targets of one package: `[[bin]]`s, plus cargo's automatic ones unless disabled."""
    pkg = data.get("package")
    if not pkg:
        return []
    bins = [b["name"] for b in data.get("bin", []) if "name" in b]
    if pkg.get("autobins", True):
        if (crate / "src/main.rs").exists():
            bins.append(pkg["name"])
        bins += [p.stem for p in sorted((crate / "src/bin").glob("*.rs"))]
        bins += [p.parent.name for p in sorted((crate / "src/bin").glob("*/main.rs"))]
    return list(dict.fromkeys(bins))


def _members(repo: Path, data: dict[str, Any]) -> list[Path]:
    members: list[Path] = []
    for pattern in data.get("workspace", {}).get("members", []):
        members += [p for p in sorted(repo.glob(pattern)) if (p / "Cargo.toml").exists() and p != repo]
    return members


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BuildError(f"{path.name}: cannot read ({exc})") from exc


def go(repo: Path, exe: str | None, package: str | None) -> Recipe | None:
    gomod = repo / "go.mod"
    if not gomod.exists():
        return None
    module = go_module(repo)
    mains = main_packages(repo, module)
    name = choose(list(mains), exe, [package, _module_name(module)], "go.mod")
    pkg = mains.get(name, ".")
    out = name if not (repo / name).is_dir() else f"{name}.bin"
    mod = "-mod=vendor" if (repo / "vendor/modules.txt").exists() else "-mod=mod"
    env = f"GOPROXY=off GOFLAGS={mod}"
    return Recipe(
        kind="go",
        language="go",
        coverage="go",
        build=[f"{env} go build -trimpath -o {out} {pkg}"],
        coverage_build=[f"{env} go build -cover -o {out}.cov {pkg}"],
        executable=out,
        coverage_executable=f"{out}.cov",
    )


GOCODE = "/usr/share/gocode"  # where Debian's golang-*-dev packages put their sources


def builds_in_gopath(recipe: Recipe, repo: Path) -> bool:
    """A Go recipe of a Debian source with golang-*-dev Build-Depends and no vendor/."""
    has_go_deps = any(p.startswith("golang-") and p.endswith("-dev") for p in recipe.build_depends)
    return recipe.kind == "go" and has_go_deps and not (repo / "vendor/modules.txt").exists()


def debian_gopath(recipe: Recipe, repo: Path) -> Recipe:
    """A Go recipe of a Debian source built as Debian builds Go: in GOPATH mode over the
    sources its golang-*-dev Build-Depends install (no module proxy is reachable), the tree
    linked in at its module's import path (a relative link: /cov, a copy, works the same).
    Any other recipe, a module that vendors, or one without such packages, is as it was."""
    if not builds_in_gopath(recipe, repo):
        return recipe
    module = go_module(repo)
    gopath = gopath_prefix(repo)
    env = re.compile(r"^GOPROXY=off GOFLAGS=\S+")
    # GOPATH mode's -cover instruments the main package alone; the module's packages are named
    cover = [
        env.sub(gopath, line).replace(" -cover ", f" -cover -coverpkg={module}/... ")
        for line in recipe.coverage_build
    ]
    return recipe.model_copy(
        update={"build": [env.sub(gopath, line) for line in recipe.build], "coverage_build": cover}
    )


def go_module(repo: Path) -> str:
    match = re.search(r"^module\s+(\S+)", read(repo / "go.mod"), re.M)
    return match.group(1).strip('"') if match else repo.name


def gopath_prefix(repo: Path) -> str:
    """Shell: link the tree in at its module's import path under .tf-gopath, go there, and
    set GOPATH mode's variables (a command follows: `go build ...`, `go test ./...`)."""
    module = go_module(repo)
    link = f".tf-gopath/src/{module}"
    up = "/".join([".."] * (len(module.split("/")) + 1))
    return (
        f"mkdir -p $(dirname {link}) && ln -sfn {up} {link} && cd {link} && "
        f"GO111MODULE=off GOPROXY=off GOFLAGS= GOPATH=$PWD/.tf-gopath:{GOCODE}"
    )


def main_packages(repo: Path, module: str) -> dict[str, str]:
    """Program name -> package path for every `package main` at the root or one or two levels down."""
    found: dict[str, str] = {}
    for directory in [repo, *sorted(repo.glob("*/")), *sorted(repo.glob("*/*/"))]:
        rel = directory.relative_to(repo).as_posix()
        if not directory.is_dir() or rel.split("/")[0] in {
            "vendor",
            "testdata",
            "internal",
            "examples",
            "example",
            ".git",
        }:
            continue
        if any(
            re.search(r"^package\s+main\b", read(f), re.M)
            for f in directory.glob("*.go")
            if not f.name.endswith("_test.go")
        ):
            name = _module_name(module) if rel == "." else directory.name
            found.setdefault(name, "." if rel == "." else f"./{rel}")
    return found


def _module_name(module: str) -> str:
    parts = module.rstrip("/").split("/")
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        parts.pop()  # example.com/tool/v2 -> tool
    return parts[-1]
