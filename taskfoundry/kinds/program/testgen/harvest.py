"""Harvest the program's own tests as probes.

The project's test suite (make check, ctest, meson test, cargo test, go test, pytest, or a
test script) runs once in a throwaway container of the build image, with a recording shim
(`assets/program/harvest_shim.py`) wherever the tests look for the program: the gold's
place in the build tree, cargo's test build of it, and the program's name on PATH. The
shim logs each call and hands it to the gold. Each recorded call becomes a probe (origin
`harvested`) that the explorer runs on the coverage build first and keeps like any other.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import shlex
import time
from pathlib import Path, PurePosixPath
from typing import Any

import docker

from taskfoundry.assets import asset
from taskfoundry.builders.detect_c import GOLD_BUILD
from taskfoundry.builders.detect_python import COV_VENV
from taskfoundry.builders.detect_rust_go import builds_in_gopath, gopath_prefix
from taskfoundry.builders.recipe import Recipe
from taskfoundry.errors import SandboxError
from taskfoundry.kinds.program.results import HarvestReport
from taskfoundry.kinds.program.settings import HarvestConfig
from taskfoundry.kinds.program.testgen import runtime_inputs
from taskfoundry.kinds.program.testgen.probes import HARVESTED, Probe
from taskfoundry.layout import GOLD
from taskfoundry.pipeline.settings import PROBE_LIMITS
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)

HOME = "/tf-harvest"
LOG = f"{HOME}/calls.jsonl"
CWD_BYTES = 16 * 1024  # a working directory's files replayed with a call that names none, at most
ROOT = "0:0"  # the project's tests build and write in /src, which root owns


def _has_target(repo: Path, target: str) -> bool:
    pattern = re.compile(rf"^{target}\s*:", re.M)
    for name in ("GNUmakefile", "makefile", "Makefile", "Makefile.in", "Makefile.am"):
        path = repo / name
        if path.is_file() and pattern.search(path.read_text(errors="replace")):
            return True
    return (repo / "Makefile.am").is_file()  # automake writes `check` itself


CARGO = "cargo test --offline -q"
COMPILES_TESTS = frozenset({"cargo", "go"})  # recipe kinds whose test command builds the tests first
_SCRIPTS = ("run-tests.sh", "run_tests.sh", "runtests.sh", "test.sh", "tests/run.sh", "test/run.sh")


def own_test_command(repo: Path, recipe: Recipe) -> str | None:
    """The command that runs the project's own tests in /src, or None: none found. A Python
    project's pytest loads the plugin that records calls of the recipe's entry point."""
    kind = recipe.kind
    if kind == "cargo":
        has = (repo / "tests").is_dir() or any("#[test]" in _read(p) for p in _rs(repo))
        return f"{CARGO} --no-run && tf_shim_cargo && {CARGO} --no-fail-fast" if has else None
    if kind == "go":  # in GOPATH mode where the build was (a Debian source's)
        gopath = f"{gopath_prefix(repo)} " if builds_in_gopath(recipe, repo) else ""
        return f"{gopath}go test ./..." if any(repo.rglob("*_test.go")) else None
    if kind == "cmake":
        return f"ctest --test-dir {GOLD_BUILD} --output-on-failure" if _cmake_tests(repo) else None
    if kind == "meson":  # tests are declared in any meson.build (fribidi's in test/)
        has = any(re.search(r"\btest\(", _read(p)) for p in repo.rglob("meson.build"))
        return f"meson test -C {GOLD_BUILD} --no-rebuild" if has else None
    if kind == "python":
        where = next((d for d in ("tests", "test") if (repo / d).is_dir()), None)
        found = where is not None or any(repo.glob("test_*.py"))
        return _pytest(recipe.entry_point, where or "") if found else None
    make = "bmake" if "bmake" in recipe.packages else "make"  # the make the build used (lowdown's)
    for target in ("check", "test", "regress"):  # regress: lowdown's and other BSD makefiles
        if _has_target(repo, target):
            return f"{make} -k {target}"
    script = next((s for s in _SCRIPTS if (repo / s).is_file()), None)
    return f"sh {script}" if script else None


# the coverage build's venv: the project installed there (and the system's pytest through
# --system-site-packages); the image's own python3 cannot import a src-layout project. The
# collection errors of one module (tox-ini-fmt's src/.../test_env.py is no test) stop none.
PYTEST = f"{COV_VENV}/bin/python -m pytest -q -p no:cacheprovider --continue-on-collection-errors"
PYTEST_PLUGIN = "tf_pyharvest"  # assets/program/harvest_pytest.py, in HOME


def _pytest(entry: str | None, where: str) -> str:
    """pytest on the test directory `where` (or the root), recording the in-process calls of
    `entry` ("module:function") where one is known."""
    if not entry:
        return f"{PYTEST} {where}".rstrip()
    path = f"PYTHONPATH={HOME}${{PYTHONPATH:+:$PYTHONPATH}}"
    return f"{path} TF_HARVEST_ENTRY={shlex.quote(entry)} {PYTEST} -p {PYTEST_PLUGIN} {where}".rstrip()


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def _rs(repo: Path) -> list[Path]:
    return list((repo / "src").rglob("*.rs")) if (repo / "src").is_dir() else []


def _cmake_tests(repo: Path) -> bool:
    return any("add_test" in _read(p) for p in repo.rglob("CMakeLists.txt"))


def _script(recipe: Recipe, program: str, command: str) -> str:
    """run.sh: shim the program where the tests look for it, then run `command` in /src.
    Where: every file of the tree with the built program's bytes (cmake's `_build/src/cmark`
    as well as the copy the recipe made), cargo's test build by name, and PATH by name."""
    name = shlex.quote(program)
    return f"""set -u
tf_shim() {{
  for f in "$@"; do
    if [ -f "$f" ] && [ ! -L "$f" ]; then
      cp {HOME}/shim "$f" && chmod 755 "$f" && echo "$f" >>{HOME}/shimmed
    fi
  done
}}
tf_shim_cargo() {{ tf_shim target/debug/{name} target/*/debug/{name}; }}
touch {HOME}/shimmed
cp /src/executable {HOME}/built
size=$(stat -c %s {HOME}/built)
find /src -type f -size "${{size}}c" ! -path '*/.git/*' | while read -r f; do
  if cmp -s "$f" {HOME}/built; then tf_shim "$f"; fi
done
mkdir -p {HOME}/bin
for n in {name} $(sed 's|.*/||' {HOME}/shimmed | sort -u); do
  case $n in executable|*.*) ;; *) cp {HOME}/shim {HOME}/bin/$n && chmod 755 {HOME}/bin/$n ;; esac
done
export PATH={HOME}/bin:$PATH
cd /src
{command}
"""


def budget(recipe: Recipe, config: HarvestConfig) -> float:
    """The seconds the project's tests may take: more where they are compiled first."""
    return config.seconds + (config.compile_seconds if recipe.kind in COMPILES_TESTS else 0)


def _outer(seconds: float) -> str:
    return (
        f"timeout -k 5 {seconds:g} sh {HOME}/run.sh </dev/null >{HOME}/out.log 2>&1; "
        f'echo "tf-exit $?" >>{HOME}/out.log'
    )


def harvest(
    client: docker.DockerClient, image: str, repo: Path, recipe: Recipe, program: str, config: HarvestConfig
) -> tuple[list[Probe], HarvestReport]:
    """The project's own tests' calls of the program, as probes, and what it took."""
    if not config.enabled:
        return [], HarvestReport(status="off")
    command = own_test_command(repo, recipe)
    if command is None:
        return [], HarvestReport(status="no_tests", detail=f"no test suite found for a {recipe.kind} build")
    start = time.monotonic()
    try:
        calls, data, exit_code, tail = _run(client, image, recipe, program, command, budget(recipe, config))
    except SandboxError as exc:
        return [], HarvestReport(status="error", command=command, detail=str(exc)[-500:])
    probes, unreplayable = to_probes(calls, config.max_probes, data_dirs(data))
    report = HarvestReport(
        status="harvested" if probes else "no_calls",
        command=command,
        exit_code=exit_code,
        timed_out=exit_code == 124,
        calls=len(calls),
        probes=len(probes),
        unreplayable=unreplayable,
        seconds=round(time.monotonic() - start, 1),
        detail="" if probes else tail,
    )
    log.info("harvest %s: %s", program, report.model_dump())
    return probes, report


def _run(
    client: docker.DockerClient, image: str, recipe: Recipe, program: str, command: str, seconds: float
) -> tuple[list[dict[str, Any]], list[str], int | None, str]:
    with DockerSandbox(image, PROBE_LIMITS, client=client) as box:
        box.exec(["mkdir", "-p", HOME], timeout=30, user=ROOT)
        box.put_file(asset("program/harvest_shim.py"), f"{HOME}/shim", mode=0o755)
        box.put_file(asset("program/harvest_pytest.py"), f"{HOME}/{PYTEST_PLUGIN}.py")
        config = {"real": GOLD, "log": LOG}
        box.put_file(json.dumps(config).encode(), f"{HOME}/config.json")
        box.put_file(_script(recipe, program, command).encode(), f"{HOME}/run.sh")
        box.exec(["sh", "-c", f"touch {LOG} && chmod 666 {LOG}"], timeout=30, user=ROOT)
        box.exec(["sh", "-c", _outer(seconds)], timeout=seconds + 60, user=ROOT)
        out = box.get_file(f"{HOME}/out.log").decode(errors="replace")
        raw = box.get_file(LOG).decode(errors="replace")
        data = runtime_inputs.installed_data(box)
    match = re.search(r"tf-exit (\d+)\s*$", out)
    calls = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return calls, data, int(match.group(1)) if match else None, out[-1500:]


def data_dirs(paths: list[str]) -> dict[str, set[str]]:
    """Each directory of the installed runtime data (absolute) -> the names in it."""
    found: dict[str, set[str]] = {}
    for path in paths:
        where = PurePosixPath("/", path)
        found.setdefault(str(where.parent), set()).add(where.name)
    return found


def to_probes(
    calls: list[dict[str, Any]], cap: int, dirs: dict[str, set[str]] | None = None
) -> tuple[list[Probe], int]:
    """Distinct replayable calls as probes (first `cap`), and how many calls could not be
    replayed. `dirs`: the installed data's directories (`data_dirs`)."""
    probes: dict[str, Probe] = {}
    unreplayable = 0
    for call in calls:
        if not call.get("stdin_complete", True) or not _encodable(call):
            unreplayable += 1
            continue
        probe = _probe(call, dirs or {})
        if len(probes) < cap:
            probes.setdefault(probe.key, probe)
    return list(probes.values()), unreplayable


def _encodable(call: dict[str, Any]) -> bool:
    """Whether the call's arguments and file names are text a test can hold: an argument of
    bytes that are not UTF-8 (b3sum's tests pass such a file name) reached the log as lone
    surrogates, which no test file can be written with."""
    names = [*call["argv"], *call.get("cwd_files", {}), *(v[1] for v in call.get("named", {}).values())]
    try:
        "".join(names).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _probe(call: dict[str, Any], dirs: dict[str, set[str]]) -> Probe:
    """A call replayed in the probe runner's scratch directory: the files its arguments named
    (and its working directory's, when that held few) written there, an argument that named a
    file outside it rewritten to the copy's name, one that named a directory of the installed
    data's files (figlet's `-d fonts` in its source tree) to where the install put them."""
    argv = list(call["argv"])
    for index, (prefix, _value, names) in call.get("dirs", {}).items():
        place = _installed_as(set(names), dirs)
        if place:
            argv[int(index)] = prefix + place
    files: dict[str, str | bytes] = {}
    if not call.get("named"):  # no argument names a file: it may read its directory's
        cwd = {n: base64.b64decode(b) for n, b in call.get("cwd_files", {}).items()}
        if sum(len(d) for d in cwd.values()) <= CWD_BYTES:
            files.update((n, _content(d)) for n, d in cwd.items())
    for index, (prefix, value, blob) in call.get("named", {}).items():
        content = _content(base64.b64decode(blob))
        local = _local_name(value, content, files)
        files[local] = content
        argv[int(index)] = prefix + local
    stdin = base64.b64decode(call.get("stdin", ""))
    return Probe(tuple(argv), stdin=_content(stdin), files=tuple(sorted(files.items())), origin=HARVESTED)


def _installed_as(names: set[str], dirs: dict[str, set[str]]) -> str | None:
    """The installed data directory holding most of `names` (at least half of them), if any."""
    if not names:
        return None
    best = max(dirs, key=lambda d: len(names & dirs[d]), default=None)
    return best if best is not None and 2 * len(names & dirs[best]) >= len(names) else None


def _local_name(value: str, content: str | bytes, taken: dict[str, str | bytes]) -> str:
    """A relative path inside the scratch directory stays; another becomes its base name (a
    number before it when a different file took that name)."""
    path = PurePosixPath(value)
    if not path.is_absolute() and ".." not in path.parts:
        return str(path)
    name, n = path.name, 1
    while taken.get(name, content) != content:
        name, n = f"{n}-{path.name}", n + 1
    return name


def _content(data: bytes) -> str | bytes:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data
