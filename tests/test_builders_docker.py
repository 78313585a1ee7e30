"""Each recipe kind builds a tiny fixture in Docker: gold runs, coverage lands on first-party lines.

Also: the toolchain layer (built once, then reused), its failure naming its log, and the
agentic fallback driven by a ScriptedModel.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from docker.errors import ImageNotFound

from taskfoundry.agent import AgentConfig
from taskfoundry.agent.scripted import ScriptedModel, bash, submit
from taskfoundry.builders import detect_python
from taskfoundry.builders.agent import BuildAgent, BuildAgentConfig
from taskfoundry.builders.build import COV_ROOT, COVERAGE, GOLD, BuildResult, run_build
from taskfoundry.builders.resolve import resolve_recipe
from taskfoundry.errors import BuildError, ImageError
from taskfoundry.kinds.program.cleanroom.elf import linkage
from taskfoundry.kinds.program.testgen.probes import Probe, RunnerJob, install_runner, run_probes
from taskfoundry.naming import TaskNames, work_dir
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.sources import resolve_source
from taskfoundry.sources.checkout import Upstream

from conftest import make_repo

pytestmark = pytest.mark.docker
NS = "taskfoundry-test"
GREET_C = (
    '#include <stdio.h>\n#include <string.h>\n#include "greet.h"\n'
    'int main(int argc, char **argv) {\n  if (argc > 1 && strcmp(argv[1], "--help") == 0) {\n'
    '    puts("usage: greet [NAME]");\n    return 0;\n  }\n'
    '  greet(argc > 1 ? argv[1] : "world");\n  return 0;\n}\n'
)
LIB_C = '#include <stdio.h>\nvoid greet(const char *who) {\n  printf("hello, %s\\n", who);\n}\n'
FILES = {"src/main.c": GREET_C, "src/greet.c": LIB_C, "src/greet.h": "void greet(const char *who);\n"}


def _build(
    tmp: Path,
    files: dict[str, str],
    client: Any,
    base: str,
    agent: BuildAgent | None = None,
    upstream: Upstream | None = None,
) -> BuildResult:
    repo = tmp / "greet"
    if not repo.exists():
        make_repo(repo, files)
    co = resolve_source(str(repo), work_dir(tmp))
    co = dataclasses.replace(co, upstream=upstream) if upstream else co
    names = TaskNames.of(co, NS, tmp)
    recipe = resolve_recipe(co, None, base, client, names, agent)
    return run_build(co, recipe, base, names, client)


def _check(client: Any, res: BuildResult, source: str) -> None:
    """Gold greets; the coverage build greets too and covers `source`, by first-party paths."""
    gold_job = RunnerJob(executable=GOLD)
    # an output cap smaller than any coverage data file: the data is not the program's output
    # (bmap-rs's profraw passed the file-size limit and every coverage run died of SIGXFSZ)
    cov_job = RunnerJob(executable=COVERAGE, coverage=res.recipe.coverage, cov_root=COV_ROOT, output_cap=64)
    with DockerSandbox(res.image, client=client) as box:
        install_runner(box)
        gold = run_probes(box, gold_job, [Probe(("Ann",))])[0]
        cov = run_probes(box, cov_job, [Probe(("Ann",))])[0]
    assert (gold.exit_code, gold.stdout) == (0, "hello, Ann\n")
    assert cov.stdout == "hello, Ann\n"
    assert source in cov.covered, f"covered files: {sorted(cov.total)}"
    assert all(not f.startswith(("/", "..", "_build")) for f in cov.total), sorted(cov.total)


def test_cmake_out_of_tree_coverage(tmp_path: Path, docker_client: Any, base_image: str) -> None:
    files = {
        **FILES,
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(greet C)\n"
        "add_library(g src/greet.c)\nadd_executable(greet src/main.c)\ntarget_link_libraries(greet g)\n",
    }
    res = _build(tmp_path, files, docker_client, base_image)
    assert res.recipe.kind == "cmake"
    _check(docker_client, res, "src/greet.c")


def test_meson_cpp(tmp_path: Path, docker_client: Any, base_image: str) -> None:
    files = {
        "src/main.cpp": "#include <iostream>\n#include <string>\nint main(int c, char **v) {\n"
        '  std::string who = c > 1 ? v[1] : "world";\n  std::cout << "hello, " << who << "\\n";\n}\n',
        "meson.build": "project('greet', 'cpp')\nexecutable('greet', 'src/main.cpp')\n",
    }
    res = _build(tmp_path, files, docker_client, base_image)
    assert (res.recipe.kind, res.recipe.language) == ("meson", "cpp")
    _check(docker_client, res, "src/main.cpp")


def test_autotools(tmp_path: Path, docker_client: Any, base_image: str) -> None:
    """Both files define `greet_calls` through the header, as C before GCC 10 did (autogen's
    `option_usage_fp`): the link needs -fcommon in both builds ("multiple definition")."""
    files = {
        **FILES,
        "src/greet.h": "void greet(const char *who);\nint greet_calls;\n",
        "src/greet.c": '#include "greet.h"\n' + LIB_C,
        "configure.ac": "AC_INIT([greet], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nAC_PROG_CC\n"
        "AC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n",
        "Makefile.am": "bin_PROGRAMS = greet\ngreet_SOURCES = src/main.c src/greet.c src/greet.h\n",
    }
    res = _build(tmp_path, files, docker_client, base_image)
    assert res.recipe.kind == "autotools" and res.recipe.build[0] == "autoreconf -fi"
    _check(docker_client, res, "src/greet.c")


def test_autoreconf_gets_the_tools_its_macros_call(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """libidn2's configure.ac calls gettext's macros: `autoreconf -fi` runs autopoint, which
    the base image lacks ("autopoint failed"); the recipe installs it."""
    files = {
        **FILES,
        "configure.ac": "AC_INIT([greet], [1.0])\nAC_CONFIG_MACRO_DIRS([m4])\nAM_INIT_AUTOMAKE([foreign])\n"
        "AC_PROG_CC\nAM_GNU_GETTEXT([external])\nAM_GNU_GETTEXT_VERSION([0.21])\n"
        "AC_CONFIG_FILES([Makefile po/Makefile.in])\nAC_OUTPUT\n",
        "po/POTFILES.in": "src/greet.c\n",
        "po/LINGUAS": "",
        "po/Makevars": "DOMAIN = $(PACKAGE)\nsubdir = po\ntop_builddir = ..\nXGETTEXT_OPTIONS =\n",
        "Makefile.am": "ACLOCAL_AMFLAGS = -I m4\nSUBDIRS = po\nbin_PROGRAMS = greet\n"
        "greet_SOURCES = src/main.c src/greet.c src/greet.h\n",
    }
    res = _build(tmp_path, files, docker_client, base_image)
    assert res.recipe.build[0] == "autoreconf -fi" and res.recipe.packages == ["autopoint"]
    _check(docker_client, res, "src/greet.c")


# zstd's shape: the default target builds a shared library whose link line adds -shared to
# LDFLAGS; LDFLAGS=--coverage on make's command line would replace it ("undefined reference to
# `main'") and fail the coverage build, so it is made again with the flags in the environment
SHARED_MAKEFILE = (
    "CFLAGS ?= -O2\nall: libgreet.so greet\n"
    "libgreet.so: LDFLAGS += -shared\nlibgreet.so: src/greet.c\n"
    "\t$(CC) $(CFLAGS) -fPIC $(LDFLAGS) -o $@ src/greet.c\n"
    "greet: src/main.c src/greet.c\n\t$(CC) $(CFLAGS) $(LDFLAGS) -o $@ src/main.c src/greet.c\n"
)


def test_make_coverage_when_command_line_flags_break_the_build(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    res = _build(tmp_path, {**FILES, "Makefile": SHARED_MAKEFILE}, docker_client, base_image)
    assert res.recipe.kind == "make" and res.recipe.executable == "greet"
    _check(docker_client, res, "src/greet.c")
    # the defence off: the command-line flags alone fail the coverage build
    first = res.recipe.coverage_build[0].split(" || ")[0]
    broken = res.recipe.model_copy(update={"coverage_build": [first]})
    co = resolve_source(str(tmp_path / "greet"), work_dir(tmp_path))
    with pytest.raises(ImageError, match="docker build failed") as failed:
        run_build(co, broken, base_image, TaskNames.of(co, NS, tmp_path), docker_client)
    assert failed.value.log is not None
    log = re.sub(r"\x1b\[[0-9;]*m", "", failed.value.log.read_text())  # the engine colours stderr
    assert "undefined reference to `main'" in log


def test_cargo(tmp_path: Path, docker_client: Any, base_image: str) -> None:
    """(Go, make and cargo with a Cargo.lock are also built end to end by the examples.)"""
    rust = {
        "Cargo.toml": "[package]\nname = 'greet'\nversion = '0.1.0'\nedition = '2021'\n",
        "src/main.rs": 'fn main() {\n    let who = std::env::args().nth(1).unwrap_or("world".into());\n'
        '    println!("hello, {who}");\n}\n',
    }
    res = _build(tmp_path, rust, docker_client, base_image)
    assert res.recipe.kind == "cargo" and res.deps == ["cargo: no registry dependencies"]
    _check(docker_client, res, "src/main.rs")


def test_python_console_script(tmp_path: Path, docker_client: Any, base_image: str) -> None:
    files = {
        "pyproject.toml": "[build-system]\nrequires = ['flit_core>=3.4,<4']\n"
        "build-backend = 'flit_core.buildapi'\n[project]\nname = 'greet'\nversion = '1.0'\n"
        "description = 'greets'\n[project.scripts]\ngreet = 'greet.cli:main'\n",
        "greet/__init__.py": "",
        "greet/cli.py": "import os, sys\n\n\ndef main():\n"
        "    who = sys.argv[1] if len(sys.argv) > 1 else 'world'\n    print(f'hello, {who}')\n"
        "    if who == 'data':  # package data read by path, as kas reads its schema\n"
        "        print(open(os.path.join(os.path.dirname(__file__), 'word.txt')).read())\n"
        "    return 3 if who == 'fail' else 0\n",
        "greet/word.txt": "from a data file",
        "greet/big.txt": "x" * 1_500_000,  # past the probe runner's 1 MB file-size limit
        "greet/bulk.txt": "y" * 30_000_000,  # a copy fits in the capped /tmp below, two do not
    }
    res = _build(tmp_path, files, docker_client, base_image)
    assert (res.recipe.kind, res.recipe.coverage, res.recipe.source_visible) == ("python", "python", True)
    _check(docker_client, res, "greet/cli.py")
    with DockerSandbox(res.image, client=docker_client) as box:
        install_runner(box)
        data, fail = run_probes(box, RunnerJob(executable=GOLD), [Probe(("data",)), Probe(("fail",))])
    assert (data.exit_code, data.stdout) == (0, "hello, data\nfrom a data file\n"), data.stderr
    assert fail.exit_code == 3  # the entry point's return value, as its console script gives it
    with DockerSandbox(res.image, client=docker_client) as box:  # two uids, as mutation runs them
        said = [box.exec([GOLD, "x"], timeout=30, user=uid).stdout for uid in ("1000", "1001")]
        copies = box.exec(COPIES, timeout=30).stdout.split()
    assert said == [b"hello, x\n"] * 2 and len(copies) == 1  # the second uid runs from the first's copy
    # first runs at once, as xdist starts them, in a /tmp that holds one copy (the grader's is
    # capped: two copies of fabio's 286 MB filled its 512 MB, and every test was an error)
    with DockerSandbox(res.image, client=docker_client, tmpfs={"/tmp": "size=40m,mode=1777"}) as box:
        with ThreadPoolExecutor(6) as pool:
            said = list(pool.map(lambda u: box.exec([GOLD, f"u{u}"], timeout=60, user=str(u)).stdout, UIDS))
        copies = box.exec(COPIES, timeout=30).stdout.split()
    assert said == [f"hello, u{u}\n".encode() for u in UIDS] and len(copies) == 1, copies
    again = _build(tmp_path, files, docker_client, base_image)  # the host-side wheel build left no trace
    assert (again.image, again.built) == (res.image, False)


HELPED = {
    "pyproject.toml": "[build-system]\nrequires = ['flit_core>=3.4,<4']\n"
    "build-backend = 'flit_core.buildapi'\n[project]\nname = 'greet'\nversion = '1.0'\n"
    "description = 'greets'\n[project.scripts]\ngreet = 'greet.cli:main'\n"
    "greet-helper = 'greet.helper:main'\n",
    "greet/__init__.py": "",
    "greet/cli.py": "import subprocess, sys\n\n\ndef main():\n"
    "    try:\n        said = subprocess.run(['greet-helper', sys.argv[1]], capture_output=True, text=True)\n"
    "    except FileNotFoundError:\n        print('no greet-helper on PATH')\n        return 1\n"
    "    print(said.stdout.strip() or said.stderr.strip().splitlines()[-1])\n    return said.returncode\n",
    "greet/helper.py": "import sys\n\n\ndef main():\n    print(f'helped {sys.argv[1]}')\n",
}


@pytest.mark.parametrize("defence", [True, False])
def test_a_python_gold_finds_the_console_scripts_installed_with_it(
    tmp_path: Path, docker_client: Any, base_image: str, monkeypatch: pytest.MonkeyPatch, defence: bool
) -> None:
    """ansible-lint runs `ansible`: its zipapp gold found none on PATH, and every call answered
    "Failed to find runtime dependency 'ansible' in PATH". The console scripts installed with
    the program are on its PATH and import from its unpacked copy, as a venv's would."""
    if not defence:
        monkeypatch.setattr(detect_python, "SCRIPTS_RUN_ANYWHERE", "true")
        monkeypatch.setattr(
            detect_python, "_MAIN", detect_python._MAIN.replace("_on_path(sys.path[0])\n", "")
        )
    res = _build(tmp_path, HELPED, docker_client, base_image)
    with DockerSandbox(res.image, client=docker_client) as box:
        said = box.exec([GOLD, "ann"], timeout=60, user="1000")
    if defence:
        assert (said.exit_code, said.stdout) == (0, b"helped ann\n"), said
    else:
        assert said.exit_code != 0 and said.stdout == b"no greet-helper on PATH\n", said


UIDS = range(3000, 3006)
COPIES = "find /tmp -maxdepth 1 -type d -name '*tf-app-*'"  # the unpacked programs, whole or not
GENERATING_SETUP = """\
import os
from setuptools import setup
from setuptools.command.build_py import build_py


class Generate(build_py):  # a module the build writes, as setuptools_scm and meson-python do
    def run(self):
        super().run()
        with open(os.path.join(self.build_lib, "greet", "_version.py"), "w") as out:
            out.write("version = '1.0'\\n")


setup(
    name="greet",
    version="1.0",
    packages=["greet"],
    package_dir={"": "Lib"},
    cmdclass={"build_py": Generate},
    entry_points={"console_scripts": ["greet = greet.cli:main"]},
)
"""


def test_a_python_package_the_build_completes_is_measured_in_its_tree(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """fabio's build writes fabio/version.py: imported from the tree alone, every coverage
    run stopped at "No module named 'fabio.version'". ufomerge keeps its package in Lib/."""
    files = {
        "setup.py": GENERATING_SETUP,
        "pyproject.toml": "[build-system]\nrequires = ['setuptools>=61']\n"
        "build-backend = 'setuptools.build_meta'\n",
        "Lib/greet/__init__.py": "",
        "Lib/greet/cli.py": "import sys\nfrom greet._version import version\n\n\ndef main():\n"
        "    print(f'hello, {sys.argv[1]}')\n",
    }
    res = _build(tmp_path, files, docker_client, base_image)
    _check(docker_client, res, "Lib/greet/cli.py")


def test_a_debian_source_builds_with_its_build_depends_the_base_has(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """A `debian:` source names no library in its tree; its .dsc's Build-Depends (for sid) are
    installed where trixie has them, and one trixie lacks is skipped, not fatal."""
    files = {
        "prog.c": "#include <zlib.h>\n#include <stdio.h>\nint main(void) {\n"
        '  printf("zlib %s\\n", zlibVersion());\n  return 0;\n}\n',
        "Makefile": "greet: prog.c\n\t$(CC) $(CFLAGS) $(LDFLAGS) -o greet prog.c -lz\n",
    }
    depends = ("zlib1g-dev", "tf-no-such-package")
    up = Upstream("debian", "greet", "1.0-1", "http://x/greet.orig.tar.gz", "0" * 64, depends)
    res = _build(tmp_path, files, docker_client, base_image, upstream=up)
    assert res.recipe.build_depends == list(depends) and res.toolchain != base_image
    dockerfile = next((tmp_path / "work/toolchains").glob("*/context/Dockerfile")).read_text()
    assert "apt-cache show" in dockerfile and "tf-no-such-package" in dockerfile
    with DockerSandbox(res.image, client=docker_client) as box:
        assert box.exec([GOLD], timeout=30).stdout.startswith(b"zlib 1.")
    with pytest.raises(ImageError, match="docker build failed"):  # the defence off: no zlib.h
        _build(tmp_path / "plain", files, docker_client, base_image)


def test_a_debian_go_source_builds_over_its_packaged_dependencies(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """No module proxy is reachable: a Debian Go source imports other modules through the
    golang-*-dev packages of its Build-Depends, in GOPATH mode, as Debian builds it."""
    files = {
        "go.mod": "module example.com/titler\n\ngo 1.21\n\nrequire golang.org/x/text v0.14.0\n",
        "main.go": 'package main\n\nimport (\n\t"fmt"\n\t"os"\n\n\t"example.com/titler/greet"\n'
        '\t"golang.org/x/text/cases"\n\t"golang.org/x/text/language"\n)\n\nfunc main() {\n'
        '\twho := "world"\n\tif len(os.Args) > 1 {\n\t\twho = os.Args[1]\n\t}\n'
        "\tfmt.Println(cases.Title(language.English).String(greet.Line(who)))\n}\n",
        "greet/greet.go": 'package greet\n\nfunc Line(who string) string {\n\treturn "hello, " + who\n}\n',
    }
    depends = ("golang-any", "golang-golang-x-text-dev")
    up = Upstream("debian", "titler", "1.0-1", "http://x/titler.orig.tar.gz", "0" * 64, depends)
    res = _build(tmp_path, files, docker_client, base_image, upstream=up)
    assert "GO111MODULE=off" in res.recipe.build[0] and res.recipe.kind == "go"
    cov_job = RunnerJob(executable=COVERAGE, coverage="go", cov_root=COV_ROOT, go_module="example.com/titler")
    with DockerSandbox(res.image, client=docker_client) as box:
        install_runner(box)
        gold = run_probes(box, RunnerJob(executable=GOLD), [Probe(("ann",))])[0]
        cov = run_probes(box, cov_job, [Probe(("ann",))])[0]
    assert gold.stdout == cov.stdout == "Hello, Ann\n"
    assert {"main.go", "greet/greet.go"} <= set(cov.covered), sorted(cov.total)  # the module's packages
    with pytest.raises(BuildError, match="Go module proxy is not reachable"):  # not a Debian source
        _build(tmp_path / "plain", files, docker_client, base_image)


def test_a_static_program_that_behaves_otherwise_is_not_the_gold(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """GNU hello linked statically greets, then dies of SIGSEGV; its tests all expected the
    crash. A static build whose plain calls differ from the recipe's own build is not used."""
    main = (
        "#include <stdio.h>\nextern char _DYNAMIC[] __attribute__((weak));\n"
        'int main(void) { puts(_DYNAMIC ? "linked dynamically" : "linked statically"); return 0; }\n'
    )
    files = {"prog.c": main, "Makefile": "greet: prog.c\n\t$(CC) -o greet prog.c\n"}
    res = _build(tmp_path, files, docker_client, base_image)
    with DockerSandbox(res.image, client=docker_client) as box:
        gold = box.get_file(GOLD)
        said = box.exec([GOLD], timeout=30).stdout
    assert said == b"linked dynamically\n" and linkage(gold) == "dynamic"
    if res.built:  # (an image from an earlier run on this machine is reused, with no new log)
        assert "the static program differs from the recipe's own build on ''" in res.log.read_text()
    greet = FILES | {"Makefile": "greet:\n\tcc -o greet src/*.c\n"}
    same = _build(tmp_path / "plain", greet, docker_client, base_image)
    with DockerSandbox(same.image, client=docker_client) as box:
        assert linkage(box.get_file(GOLD)) == "static"  # the same behaviour: static, as before


def test_a_go_program_printing_its_build_settings_is_still_static(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """gobuster's --version prints Go's build settings (CGO_ENABLED differs between the two
    builds): how it was built, not what it does, so the static build is the gold."""
    main = (
        'package main\n\nimport (\n\t"fmt"\n\t"os"\n\t"runtime/debug"\n)\n\nfunc main() {\n'
        '\tif len(os.Args) > 1 && os.Args[1] == "--version" {\n\t\tinfo, _ := debug.ReadBuildInfo()\n'
        '\t\tfmt.Println(info)\n\t\treturn\n\t}\n\tfmt.Println("hi")\n}\n'
    )
    files = {"go.mod": "module example.com/hi\n\ngo 1.21\n", "main.go": main}
    res = _build(tmp_path, files, docker_client, base_image)
    with DockerSandbox(res.image, client=docker_client) as box:
        assert linkage(box.get_file(GOLD)) == "static"
        said = box.exec([GOLD, "--version"], timeout=30).stdout
    assert b"\tCGO_ENABLED=0" in said  # the static build's settings, which differ from the own build's


def test_toolchain_layer_is_built_once(tmp_path: Path, docker_client: Any, base_image: str) -> None:
    files = {
        "prog.c": "#include <zlib.h>\n#include <stdio.h>\nint main(int c, char **v) {\n"
        '  printf("hello, %s\\n", c > 1 ? v[1] : zlibVersion());\n  return 0;\n}\n',
        "Makefile": "greet: prog.c\n\t$(CC) $(CFLAGS) $(LDFLAGS) -o greet prog.c -lz\n",
        "taskfoundry.yaml": "packages: [zlib1g-dev]\n",
    }
    first = _build(tmp_path, files, docker_client, base_image)
    assert first.recipe.kind == "make" and first.toolchain != base_image
    assert (tmp_path / "work/toolchains").is_dir()
    assert "zlib1g-dev" in next((tmp_path / "work/toolchains").glob("*/context/Dockerfile")).read_text()
    again = _build(tmp_path, files, docker_client, base_image)
    assert (again.image, again.built, again.toolchain_built) == (first.image, False, False)
    _check(docker_client, again, "prog.c")


def test_toolchain_failure_names_its_log(tmp_path: Path, docker_client: Any, base_image: str) -> None:
    files = {
        **FILES,
        "Makefile": "greet:\n\tcc -o greet src/*.c\n",
        "taskfoundry.yaml": "packages: [no-such-package-tf]\n",
    }
    pattern = r"^docker build failed.*\(log: .*toolchains/"
    with pytest.raises(ImageError, match=pattern) as err:
        _build(tmp_path, files, docker_client, base_image)
    assert err.value.log is not None and "no-such-package-tf" in err.value.log.read_text()


BUILD_SH = "cat > build.sh <<'EOF'\n#!/bin/sh\nset -e\ncc -O2 -o executable src/main.c src/greet.c\nEOF\n"
COV_SH = "cat > build-cov.sh <<'EOF'\ncc -O0 -g --coverage -o executable src/main.c src/greet.c\nEOF\n"


def test_agent_writes_the_build_when_detection_fails(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    model = ScriptedModel(
        [
            bash("ls src"),
            bash(BUILD_SH),
            submit("gold only"),  # verifier: no cov
            bash(COV_SH),
            submit("both"),
        ]
    )
    agent = BuildAgent(model, BuildAgentConfig(agent=AgentConfig(step_limit=8, bash_timeout=60)))
    res = _build(tmp_path, FILES, docker_client, base_image, agent)
    assert (res.recipe.kind, res.recipe.coverage, res.recipe.language) == ("agent", "gcov", "c")
    assert res.recipe.build == ["cc -O2 -o executable src/main.c src/greet.c"]
    assert "build-cov.sh is missing" in model.seen[3][-1].content
    assert any((tmp_path / "work/builds").glob("*/agent-build.json"))
    _check(docker_client, res, "src/greet.c")


def test_agent_out_of_budget_is_a_build_error(tmp_path: Path, docker_client: Any, base_image: str) -> None:
    agent = BuildAgent(ScriptedModel([bash("ls")]), BuildAgentConfig(agent=AgentConfig(step_limit=1)))
    pattern = r"(?s)build agent's scripts do not work \(agent exhausted \(steps\)\).*build.sh is missing"
    with pytest.raises(BuildError, match=pattern) as err:
        _build(tmp_path, FILES, docker_client, base_image, agent)
    assert err.value.log is not None and err.value.log.name == "agent-build.json"


def test_a_run_step_image_holds_what_its_step_changed_and_not_what_it_removed(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """The one-RUN image made from a container's own list of its change (no commit): new,
    changed, moved and removed paths, owners, modes and links as `docker build` leaves them,
    and none of the capture's working files."""
    from taskfoundry.images.build import context_tag
    from taskfoundry.images.run_layer import WORK, run_step_image

    run = (
        "mkdir -p /opt/made && echo new > /opt/made/file && chown 1000:1000 /opt/made/file"
        " && chmod 0600 /opt/made/file && ln -s file /opt/made/link && echo more >> /etc/issue"
        " && rm -rf /usr/share/doc && rm /etc/debian_version && mv /etc/motd /etc/motd.moved"
    )
    folder = tmp_path / "ctx"
    folder.mkdir()
    (folder / "Dockerfile").write_text(f"FROM {base_image}\nRUN {run}\n")
    # an engine that kept the image from an earlier run would reuse it: this test makes it
    with contextlib.suppress(ImageNotFound):
        docker_client.images.remove(context_tag(folder, NS + "/runstep"), force=True)
    tag, built = run_step_image(docker_client, base_image, run, folder, NS + "/runstep", tmp_path / "log")
    again = run_step_image(docker_client, base_image, run, folder, NS + "/runstep", tmp_path / "log")
    assert built and again == (tag, False)
    check = (
        "stat -c '%U:%u %a' /opt/made/file; cat /opt/made/file; readlink /opt/made/link; tail -1 /etc/issue;"
        f" for p in /usr/share/doc /etc/debian_version /etc/motd {WORK}; do test -e $p && echo has $p; done;"
        " test -f /etc/motd.moved && echo moved; test -d /usr/share && echo share"
    )
    with DockerSandbox(tag, client=docker_client) as box:
        out = box.exec(check, timeout=30).stdout.decode().split("\n")
    assert out[0].endswith(":1000 600") and out[1:4] == ["new", "file", "more"], out
    assert [line for line in out[4:] if line] == ["moved", "share"], out
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "Dockerfile").write_text(f"FROM {base_image}\nRUN exit 3\n")
    with pytest.raises(ImageError, match=r"docker build failed.*non-zero code: 3") as failed:
        run_step_image(
            docker_client, base_image, "echo said-first; exit 3", bad, NS + "/runstep", bad / "log"
        )
    assert failed.value.log == bad / "log" and "said-first" in failed.value.log.read_text()
