"""Detectors for C and C++ build systems: cmake, meson, autotools (configure), plain make.

Gold builds are optimised and static where the build system allows (`BUILD_SHARED_LIBS=OFF`,
`--default-library=static`, `--disable-shared`), so the program runs without the build
tree. Coverage builds use gcc `--coverage`; cmake and meson build out of tree in
COV_BUILD (outside COV_ROOT: generated files there are not first-party) and their
compile lines name the sources under COV_ROOT, which is what the gcov reader measures.
"""

from __future__ import annotations

import re
from pathlib import Path

from taskfoundry.builders.detect_python import console_scripts
from taskfoundry.builders.pick import (
    C_SUFFIXES,
    SKIP_DIRS,
    c_language,
    choose,
    copy_built,
    norm,
    read,
    source_files,
)
from taskfoundry.builders.recipe import Recipe
from taskfoundry.layout import COV_BUILD

GOLD_BUILD = "_build"
# -fcommon: C written before GCC 10 defines one variable in a header every file includes
# (autogen's `option_usage_fp`), which GCC 10's -fno-common stops at the link: "multiple
# definition". Debian's own builds add it where it is needed; it changes no correct program.
COV_FLAGS = "-O0 -g -fcommon --coverage"
GOLD_CFLAGS = "-g -O2 -fcommon"
# Tools a plain Makefile may run that the base image lacks, and their Debian packages (a
# configure script finds them missing and goes on; autotools builds pass --disable-nls). A
# tool counts where a recipe line starts with it or a variable is set to it: dos2unix's
# `all` makes its .mo files with `msgfmt`.
MAKE_TOOLS = {
    "msgfmt": "gettext",
    "msgmerge": "gettext",
    "xgettext": "gettext",
    "bison": "bison",
    "yacc": "bison",
    "flex": "flex",
}
# What `autoreconf` runs besides autoconf, automake and libtool, by the macro that calls for it:
# libidn2's configure.ac uses gettext's, and autoreconf stopped at "autopoint failed"
AUTORECONF_TOOLS = {
    "AM_GNU_GETTEXT": "autopoint",
    "GTK_DOC_CHECK": "gtk-doc-tools",
    "IT_PROG_INTLTOOL": "intltool",
}
# A tree of gnulib's ./bootstrap and no configure (Debian's libidn2 is a git snapshot): the
# gnulib Debian ships as a git bundle, cloned and checked out at the tree's GNULIB_REVISION,
# as Debian's gnulib-dpkg.mk does. `autoreconf` alone stopped at "AC_INIT should be called
# with package and version arguments" (build-aux/git-version-gen comes from gnulib), and
# /usr/share/gnulib as it is was too old for the tree's gnulib patches. --copy: no link
# into the clone, which the next build step does not have.
GNULIB_CLONE = "/tmp/tf-gnulib"
GNULIB_PREPARE = [
    f"rm -rf {GNULIB_CLONE} && git clone -q /usr/share/gnulib/gnulib.bundle {GNULIB_CLONE}",
    f"./bootstrap --gnulib-srcdir={GNULIB_CLONE} --skip-po --pull && "
    f"./bootstrap --gnulib-srcdir={GNULIB_CLONE} --skip-po --copy --gen",
]
_BSD_MAKE = re.compile(r"^\.(?:if|ifdef|ifndef|ifmake|for|include)\b", re.M)
_TOOL_USE = re.compile(r"^(?:\t[@+-]*|\w+\s*[:?+]?=[ \t]*)(" + "|".join(MAKE_TOOLS) + r")(?![\w.-])", re.M)


def _files(repo: Path, name: str) -> list[Path]:
    return [p for p in sorted(repo.rglob(name)) if not SKIP_DIRS.intersection(p.relative_to(repo).parts[:-1])]


# FetchContent downloads (GitHub: not reachable here) a Debian package has the source of
FETCH_LOCAL = {"googletest": ("googletest", "/usr/src/googletest")}


def fetch_content(repo: Path) -> tuple[str, list[str]]:
    """CMake options and packages for what the project's FetchContent would download: the
    installed package first (find_package), else a source a Debian package ships (cmaple
    fetches googletest unconditionally). Nothing when nothing is fetched."""
    declared: set[str] = set()
    for path in [*_files(repo, "CMakeLists.txt"), *_files(repo, "*.cmake")]:
        names = re.findall(r"FetchContent_Declare\s*\(\s*([\w.+-]+)", read(path), re.I)
        declared |= {n.lower() for n in names}
    if not declared:
        return "", []
    local = {name: FETCH_LOCAL[name] for name in sorted(declared) if name in FETCH_LOCAL}
    options = " -DFETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS" + "".join(
        f" -DFETCHCONTENT_SOURCE_DIR_{name.upper()}={path}" for name, (_, path) in local.items()
    )
    return options, [package for package, _ in local.values()]


def cmake(repo: Path, exe: str | None, package: str | None) -> Recipe | None:
    top = repo / "CMakeLists.txt"
    if not top.exists():
        return None
    match = re.search(r"^\s*project\s*\(\s*([\w.+-]+)", read(top), re.M | re.I)
    project = match.group(1) if match else None
    targets = cmake_programs(repo, project)  # program (output) name -> target name
    if not targets and not exe and console_scripts(repo):
        return None  # a Python project's extension build (scikit-build): its scripts are the programs
    name = choose(list(targets), exe, [package, project], "CMakeLists.txt")
    target = targets.get(name, name)
    fetched, packages = fetch_content(repo)
    common = f"-DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF{fetched}"
    cov_flags = (
        f"-DCMAKE_C_FLAGS='{COV_FLAGS}' -DCMAKE_CXX_FLAGS='{COV_FLAGS}' -DCMAKE_EXE_LINKER_FLAGS=--coverage"
    )
    return Recipe(
        kind="cmake",
        language=c_language(repo),
        coverage="gcov",
        build=[
            f"cmake -S . -B {GOLD_BUILD} -DCMAKE_BUILD_TYPE=Release {common}",
            f"cmake --build {GOLD_BUILD} -j2 --target {target}",
            copy_built(GOLD_BUILD, name),
        ],
        coverage_build=[
            f"cmake -S . -B {COV_BUILD} -DCMAKE_BUILD_TYPE=Debug {common} {cov_flags}",
            f"cmake --build {COV_BUILD} -j2 --target {target}",
            copy_built(COV_BUILD, name),
        ],
        executable="executable",
        coverage_executable="executable",
        program=name,
        packages=packages,
    )


def cmake_programs(repo: Path, project: str | None) -> dict[str, str]:
    """Programs `add_executable` makes, by output name (OUTPUT_NAME, else the target name)."""
    texts = [read(p) for p in _files(repo, "CMakeLists.txt")]
    variables = {"PROJECT_NAME": project or "", "CMAKE_PROJECT_NAME": project or ""}
    for text in texts:
        for var, value in re.findall(r"^\s*set\s*\(\s*(\w+)\s+\"?([\w.+-]+)\"?\s*\)", text, re.M | re.I):
            variables.setdefault(var, value)

    def expand(word: str) -> str:
        return re.sub(r"\$\{(\w+)\}", lambda m: variables.get(m.group(1), "$"), word).strip('"')

    outputs: dict[str, str] = {}
    for text in texts:
        for target, props in re.findall(
            r"set_target_properties\s*\(\s*(\S+)\s+PROPERTIES(.*?)\)", text, re.S | re.I
        ):
            found = re.search(r"OUTPUT_NAME\s+(\S+)", props)
            if found:
                outputs[expand(target)] = expand(found.group(1))
    programs: dict[str, str] = {}
    for text in texts:
        for raw in re.findall(r"^\s*add_executable\s*\(\s*([^\s)]+)", text, re.M | re.I):
            target = expand(raw)
            name = outputs.get(target, target)
            if "$" not in target and not _NOT_MAIN.search(name):
                programs.setdefault(name, target)
    return programs


#: Names of programs that are not the package's main program.
_NOT_MAIN = re.compile(r"(^|[-_])(tests?|fuzz|fuzzer|bench|benchmark|example|demo)([-_]|$)", re.I)


def meson(repo: Path, exe: str | None, package: str | None) -> Recipe | None:
    top = repo / "meson.build"
    if not top.exists():
        return None
    match = re.search(r"project\s*\(\s*'([^']+)'", read(top))
    project = match.group(1) if match else None
    programs: list[str] = []
    for path in _files(repo, "meson.build"):
        programs += re.findall(r"\bexecutable\s*\(\s*'([^']+)'", read(path))
    programs = [p for p in dict.fromkeys(programs) if not _NOT_MAIN.search(p)]
    if not programs and not exe and console_scripts(repo):
        return None  # a Python project's extension build (meson-python: fabio): its scripts are the programs
    name = choose(programs, exe, [package, project], "meson.build")
    common = "--default-library=static --wrap-mode=nodownload"
    return Recipe(
        kind="meson",
        language=c_language(repo),
        coverage="gcov",
        build=[
            f"meson setup {GOLD_BUILD} --buildtype=release {common}",
            f"meson compile -C {GOLD_BUILD}",
            copy_built(GOLD_BUILD, name),
        ],
        coverage_build=[
            f"meson setup {COV_BUILD} --buildtype=debug -Db_coverage=true {common}",
            f"meson compile -C {COV_BUILD}",
            copy_built(COV_BUILD, name),
        ],
        executable="executable",
        coverage_executable="executable",
        program=name,
    )


def autotools(repo: Path, exe: str | None, package: str | None) -> Recipe | None:
    script = repo / "configure"
    ac = next((repo / n for n in ("configure.ac", "configure.in") if (repo / n).exists()), None)
    if not script.exists() and ac is None:
        return None
    match = re.search(r"AC_INIT\(\s*\[?([^],)]+)", read(ac) if ac else "")
    project = match.group(1).strip() if match else _configure_name(read(script))
    programs: list[str] = []
    for path in _files(repo, "*.am"):  # Makefile.am and the fragments it includes (Makemodule.am)
        text = re.sub(r"\\\n", " ", read(path))  # continued lines
        for line in re.findall(r"^[ \t]*bin_PROGRAMS[ \t]*\+?=[ \t]*(.*)$", text, re.M):
            programs += [p for p in line.split() if "$" not in p]
    name = (
        choose(list(dict.fromkeys(programs)), exe, [package, project], "configure")
        if programs or exe
        else (project or package or repo.name)
    )
    generated = "Generated by GNU Autoconf" in read(script)
    fresh = script.exists() and not _stale(repo, script)
    prepare, prepare_packages = ([], []) if fresh else _generate(repo)
    opts = "--disable-shared --disable-nls --disable-dependency-tracking" if generated or ac else ""
    gold = f"{opts} CFLAGS='{GOLD_CFLAGS}'" if opts else ""
    cov = f"CFLAGS='{COV_FLAGS}' CXXFLAGS='{COV_FLAGS}' LDFLAGS=--coverage"
    # a hand-written configure comes with the Makefile it feeds (lowdown's is BSD make's), and
    # may refuse flags as arguments (lowdown's: "invalid key: CFLAGS"): then they go in its
    # environment, and the compilers carry --coverage to every compile and link line
    autoconf = generated or ac is not None
    mk, packages = ("make", []) if autoconf else make_program(read(repo / "Makefile"))
    if prepare:
        packages = [*packages, *autoreconf_packages(read(ac) if ac else ""), *prepare_packages]
    configure_cov = f"./configure {opts} {cov}".replace("  ", " ")
    if not autoconf:
        configure_cov += f" || CC='cc --coverage' CXX='c++ --coverage' {cov} ./configure"
    return Recipe(
        kind="autotools",
        language=c_language(repo),
        coverage="gcov",
        build=[*prepare, f"./configure {gold}".strip(), f"{mk} -j2", copy_built(".", name)],
        coverage_build=[
            *prepare,
            configure_cov,
            f"{mk} -j2",
            copy_built(".", name),
        ],
        executable="executable",
        coverage_executable="executable",
        program=name,
        packages=packages,
    )


def _generate(repo: Path) -> tuple[list[str], list[str]]:
    """What makes `configure`, and the packages it needs beyond autoreconf's: gnulib's
    ./bootstrap where the tree has one, else autoreconf."""
    if (repo / "bootstrap").is_file() and (repo / "bootstrap.conf").is_file():
        return list(GNULIB_PREPARE), ["gnulib"]
    return ["autoreconf -fi"], []


def autoreconf_packages(configure_ac: str) -> list[str]:
    """Debian packages `autoreconf -fi` needs for the macros `configure_ac` calls."""
    calls = set(re.findall(r"^\s*(\w+)", configure_ac, re.M))
    return [pkg for macro, pkg in AUTORECONF_TOOLS.items() if macro in calls]


def _stale(repo: Path, configure: Path) -> bool:
    """Whether an autotools input is newer than the generated `configure`: a Debian patch
    changed it (autogen's 12 patch configure.ac and *.am, and Debian's build runs
    autoreconf), and make's rebuild rules would call the tarball's automake version."""
    inputs = [repo / n for n in ("configure.ac", "configure.in", "acinclude.m4")]
    inputs += _files(repo, "*.am") + _files(repo, "*.m4")
    # the oldest generated file: autogen's patches change configure too, not aclocal.m4
    generated = [p for p in (configure, repo / "aclocal.m4") if p.is_file()]
    built = min(p.stat().st_mtime for p in generated) + 60  # a git checkout's files differ a moment
    return any(p.is_file() and p.stat().st_mtime > built for p in inputs if p.name != "aclocal.m4")


def make_program(makefile: str) -> tuple[str, list[str]]:
    """The make that reads `makefile`, and the packages it needs: BSD make (`bmake`) for a
    Makefile of `.if` and `.include` lines, which GNU make stops at ("missing separator")."""
    return ("bmake", ["bmake"]) if _BSD_MAKE.search(makefile) else ("make", [])


def _configure_name(text: str) -> str | None:
    match = re.search(r"^PACKAGE_NAME='([^']+)'", text, re.M) or re.search(r"^pkgname=(\S+)", text, re.M)
    return match.group(1).strip("'\"") if match else None


def make(repo: Path, exe: str | None, package: str | None) -> Recipe | None:
    makefile = next((repo / n for n in ("GNUmakefile", "Makefile", "makefile") if (repo / n).exists()), None)
    if makefile is None or not any(source_files(repo, C_SUFFIXES)):
        return None  # e.g. a Python project's developer Makefile
    text = read(makefile)
    name = exe or make_target(text, package) or package or repo.name
    cov = f"CFLAGS='{COV_FLAGS}' CXXFLAGS='{COV_FLAGS}' LDFLAGS='--coverage'"
    mk, packages = make_program(text)
    return Recipe(
        kind="make",
        language=c_language(repo),
        coverage="gcov",
        build=[f"{mk} -j2"],
        coverage_build=[f"{mk} -j2 {cov} || {{ {_cov_by_compiler(mk, cov)}; }}"],
        executable=name,
        coverage_executable=name,
        packages=sorted({*packages, *make_tool_packages(text)}),
    )


def _cov_by_compiler(mk: str, cov: str) -> str:
    """Coverage when flags on make's command line break the build: there they replace the
    Makefile's own, `-shared` too (zstd's library: "undefined reference to `main'"); in the
    environment the Makefile adds to them, and the compilers carry --coverage to every line."""
    return f"{mk} clean >/dev/null 2>&1 || true; {cov} {mk} -j2 CC='cc --coverage' CXX='c++ --coverage'"


def make_tool_packages(text: str) -> list[str]:
    """The Debian packages of the MAKE_TOOLS a Makefile runs, sorted."""
    return sorted({MAKE_TOOLS[tool] for tool in _TOOL_USE.findall(text)})


def make_target(text: str, package: str | None = None) -> str | None:
    """The program a Makefile builds: a target named like the package; else `all`'s (or
    `default`'s) first prerequisite that is no library (zstd's `default: lib-release
    zstd-release`); else the first plain target."""
    variables = dict(re.findall(r"^(\w+)\s*[:?]?=[ \t]*(.*?)\s*$", text, re.M))

    def expand(word: str) -> str:
        for _ in range(3):  # variables that name variables
            word = re.sub(r"\$[({](\w+)[)}]", lambda m: variables.get(m.group(1), ""), word)
        return word

    plain: list[str] = []
    default: list[str] = []
    for targets, deps in _RULE.findall(text):
        for target in expand(targets).split():
            if target in ("all", "default") and not default:
                default = expand(deps).split()
            elif not target.startswith(".") and "%" not in target and target not in _NOT_PROGRAMS:
                plain.append(target)
    named = [t for t in [*default, *plain] if package and norm(t) == norm(package)]
    programs = [t for t in default if not t.startswith("lib")] or default
    found = named or programs or plain
    return found[0] if found else None


#: A rule line: its targets (one or several) and its prerequisites; `:=` is no rule.
_RULE = re.compile(r"^([\w$(){}./-]+(?:[ \t]+[\w$(){}./-]+)*)[ \t]*:(?!=)\s*(.*)$", re.M)


_NOT_PROGRAMS = {
    "clean",
    "check",
    "test",
    "tests",
    "install",
    "uninstall",
    "dist",
    "distclean",
    "help",
    "docs",
    "doc",
    "debug",
    "release",
}
