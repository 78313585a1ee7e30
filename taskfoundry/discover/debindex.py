"""A Debian suite's Sources index, read once per run: the Debian registry itself, and the seed
of names for the registries that cannot list what they hold (the crate index, PyPI)."""

from __future__ import annotations

import dataclasses
import lzma
import re
from dataclasses import dataclass

from taskfoundry.discover.http import Client
from taskfoundry.errors import SourceError
from taskfoundry.sources.registry import DebianConfig

# sections whose binaries are programs a person runs; a binary in any other section
# (libs, libdevel, python, perl, doc, fonts, ...) does not make its source a program, nor do
# libraries, plugins, dictionaries and data of other ecosystems by their names
PROGRAM_SECTIONS = frozenset(
    "admin database devel editors electronics graphics hamradio httpd mail math misc net "
    "news science shells sound text utils vcs video web".split()
)
_NOT_PROGRAM = re.compile(
    r"^(lib|python3?-|ruby-|node-|golang-|librust-|r-cran-|r-bioc-|fonts-|php-|elpa-|"
    r"texlive-|haskell-|ocaml-|lua-|erlang-|elixir-|postgresql-\d|dokuwiki-|festvox-|apertium-|gap-|"
    r"hunspell-|aspell-|myspell-|hyphen-|xfonts-)|(-dev|-doc|-dbg|-data|-common|-examples|-tests?)$"
)

# a build dependency on a GUI toolkit makes the program a windowed one, not a command line
_GUI = re.compile(
    r"\b(libgtk-?[234][.0-9]*-dev|libgtkmm|libgtk2\.0-dev|qt6-base-dev|qtbase5-dev|libqt5|libkf[56]|"
    r"libwxgtk|libsdl[23]?(\.[0-9])?-dev|libadwaita|libglfw|libwebkit|libfltk|libxaw|libmotif|libopengl)"
)

_OTHER_TOOLCHAINS = [
    (lang, re.compile(marker))
    for lang, marker in (
        ("erlang", r"\b(erlang-dev|erlang-base|rebar3?|elixir)\b"),
        ("java", r"\b(default-jdk|maven-debian-helper|javahelper|gradle-debian-helper)\b"),
        ("ocaml", r"\b(ocaml-nox|ocaml-dune|dh-ocaml)\b"),
        ("haskell", r"\b(ghc|haskell-devscripts)\b"),
        ("pascal", r"\bfp-compiler\b"),
        ("javascript", r"\b(dh-nodejs|dh-sequence-nodejs)\b"),
        ("php", r"\bpkg-php-tools\b"),
        ("coq", r"\b(coq|dh-coq)\b"),
    )
]


@dataclass(frozen=True)
class SourcePackage:
    name: str
    version: str
    directory: str
    files: tuple[str, ...]
    binaries: tuple[tuple[str, str], ...]  # (binary package, section) from Package-List
    build_depends: str = ""
    standards: str = ""
    homepage: str = ""
    architecture: str = ""
    testsuite: str = ""
    size: int = 0  # bytes of its files (the upstream tarball and the packaging)
    fresh: bool = False  # its version is not the baseline suite's: a recent upload

    @property
    def programs(self) -> list[tuple[str, str]]:
        """Binaries that look like command-line programs (the stated rule: section and name)."""
        return [
            (b, s)
            for b, s in self.binaries
            if s.split("/")[-1] in PROGRAM_SECTIONS and not _NOT_PROGRAM.search(b)
        ]

    @property
    def gui(self) -> str | None:
        """The GUI toolkit it builds with, if any."""
        match = _GUI.search(self.build_depends)
        return match[1] if match else None

    @property
    def language(self) -> str:
        """A guess from the build dependencies: the toolchain named, else C (gcc is implied)."""
        deps = self.build_depends
        if "dh-cargo" in deps or "cargo:native" in deps or self.name.startswith("rust-"):
            return "rust"
        if "golang-go" in deps or "dh-golang" in deps or "dh-sequence-golang" in deps:
            return "go"
        arch_all = self.architecture.split() == ["all"]
        if self.python_dist and arch_all:
            return "python"
        other = next((lang for lang, marker in _OTHER_TOOLCHAINS if marker.search(deps)), None)
        if other:
            return other
        if arch_all:
            return "script"  # architecture-independent: shell, Perl, data; nothing compiled
        if re.search(r"\b(g\+\+|qt6?-base|qtbase5|libboost|cmake)\b", deps):
            return "c++"  # a guess from the build tools; C and C++ share most
        return "c"

    @property
    def python_dist(self) -> bool:
        """Built from a Python distribution (pybuild, a pypi.org homepage, a python-* source):
        not a C program that also builds Python bindings."""
        return (
            "pypi.org/project/" in self.homepage
            or "pybuild" in self.testsuite
            or "pybuild-plugin-pyproject" in self.build_depends
            or self.name.startswith("python-")
        )

    @property
    def standards_key(self) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", self.standards)[:4])


def _stanzas(text: str) -> list[dict[str, str]]:
    out = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line[:1] in (" ", "\t"):
                if key:
                    fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if "Package" in fields:
            out.append(fields)
    return out


def parse_sources(text: str) -> list[SourcePackage]:
    packages = []
    for f in _stanzas(text):
        binaries = tuple(
            (parts[0], parts[2])
            for parts in (ln.split() for ln in f.get("Package-List", "").splitlines())
            if len(parts) >= 3
        )
        listing = f.get("Checksums-Sha256") or f.get("Files", "")  # some suites drop the md5 `Files`
        entries = [ln.split() for ln in listing.splitlines() if len(ln.split()) == 3]
        files = tuple(parts[2] for parts in entries)
        packages.append(
            SourcePackage(
                name=f["Package"],
                version=f.get("Version", ""),
                directory=f.get("Directory", ""),
                files=files,
                binaries=binaries,
                build_depends=f.get("Build-Depends", "") + ", " + f.get("Build-Depends-Arch", ""),
                standards=f.get("Standards-Version", ""),
                homepage=f.get("Homepage", ""),
                architecture=f.get("Architecture", ""),
                testsuite=f.get("Testsuite", ""),
                size=sum(int(parts[1]) for parts in entries if parts[1].isdigit()),
            )
        )
    return packages


def _read(client: Client, cfg: DebianConfig, suite: str) -> dict[str, SourcePackage]:
    newest: dict[str, SourcePackage] = {}
    for component in cfg.components:
        url = f"{cfg.mirror.rstrip('/')}/dists/{suite}/{component}/source/Sources.xz"
        try:
            text = lzma.decompress(client.get(url)).decode("utf-8", "replace")
        except lzma.LZMAError as exc:
            raise SourceError(f"{url}: not an xz file ({exc})") from exc
        for pkg in parse_sources(text):
            newest[pkg.name] = pkg  # a suite listing two versions (backports) lists the newer last
    return newest


def load_index(client: Client, cfg: DebianConfig, baseline: str | None = None) -> list[SourcePackage]:
    """Every source package of the suite's components; with a `baseline` suite (testing, for
    unstable), those whose version the baseline does not have yet are marked `fresh`."""
    packages = _read(client, cfg, cfg.suite)
    if baseline:
        older = {name: pkg.version for name, pkg in _read(client, cfg, baseline).items()}
        return [dataclasses.replace(p, fresh=older.get(p.name) != p.version) for p in packages.values()]
    return list(packages.values())


def recent_first(packages: list[SourcePackage]) -> list[SourcePackage]:
    """The walk's order, with no request: fresh uploads (not yet in the baseline suite) first,
    then the newest Standards-Version (a recent upload usually declares the policy current at
    its time), then by name."""
    return sorted(packages, key=lambda p: (not p.fresh, tuple(-n for n in p.standards_key), p.name))
