from pathlib import Path

import pytest

from taskfoundry.builders.build import build_script
from taskfoundry.builders.detect import detect_recipe
from taskfoundry.builders.detect_c import GNULIB_PREPARE
from taskfoundry.errors import BuildError, ConfigError, NoBuildSystem

ROOT = Path(__file__).resolve().parents[1] / "examples"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_make_example_detected() -> None:
    recipe = detect_recipe(ROOT / "csvq")
    assert (recipe.kind, recipe.language, recipe.coverage, recipe.executable) == ("make", "c", "gcov", "csvq")
    assert "--coverage" in recipe.coverage_build[0]


def test_cargo_example_detected() -> None:
    recipe = detect_recipe(ROOT / "rcalc")
    assert (recipe.kind, recipe.coverage) == ("cargo", "llvm")
    assert recipe.executable == "target/release/rcalc"
    assert "instrument-coverage" in recipe.coverage_build[0] and "--offline --locked" in recipe.build[0]


def test_go_example_detected() -> None:
    recipe = detect_recipe(ROOT / "logsum")
    assert (recipe.kind, recipe.executable, recipe.coverage) == ("go", "logsum", "go")
    assert "-cover" in recipe.coverage_build[0] and "GOPROXY=off" in recipe.build[0]


def test_yaml_overrides_detection(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("prog: prog.c\n\tcc -o prog prog.c\n")
    (tmp_path / "prog.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "taskfoundry.yaml").write_text("executable: bin/prog\nbuild: ['make prog']\n")
    recipe = detect_recipe(tmp_path)
    assert recipe.executable == "bin/prog" and recipe.build == ["make prog"]
    assert recipe.kind == "make"


def test_yaml_packages_and_coverage_override(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(z C)\nadd_executable(z z.c)\n",
            "taskfoundry.yaml": "packages: [zlib1g-dev]\ncoverage: none\n",
        },
    )
    recipe = detect_recipe(tmp_path)
    assert (recipe.kind, recipe.packages, recipe.coverage) == ("cmake", ["zlib1g-dev"], "none")


def test_malformed_yaml_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "taskfoundry.yaml").write_text("bild: [make]\n")
    with pytest.raises(ConfigError, match=r"(?s)taskfoundry.yaml.*bild"):
        detect_recipe(tmp_path)


def test_yaml_with_a_wrong_type_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "taskfoundry.yaml").write_text("coverage: lcov\n")
    with pytest.raises(ConfigError, match=r"(?s)taskfoundry.yaml.*coverage"):
        detect_recipe(tmp_path)


def test_no_build_system_names_the_stage(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing to build\n")
    with pytest.raises(NoBuildSystem, match="no build system detected"):
        detect_recipe(tmp_path)


def test_declared_recipe_alone_is_enough(tmp_path: Path) -> None:
    (tmp_path / "taskfoundry.yaml").write_text(
        "language: c\nbuild: ['cc -o t t.c']\ncoverage_build: ['cc --coverage -o t t.c']\n"
        "executable: t\ncoverage_executable: t\ncoverage: gcov\n"
    )
    assert detect_recipe(tmp_path).kind == "declared"


def test_build_script_ends_with_executable() -> None:
    script = build_script(detect_recipe(ROOT / "rcalc"))
    assert script.startswith("#!/bin/sh\nset -e\n")
    assert script.rstrip().endswith("cp target/release/rcalc executable")


def test_cmake_picks_the_program_named_like_the_project(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(tool C)\nadd_subdirectory(src)\n",
            "src/CMakeLists.txt": "add_executable(helper h.c)\nadd_executable(${PROJECT_NAME} m.c)\n",
            "tests/CMakeLists.txt": "add_executable(runner t.c)\n",
            "src/m.c": "",
        },
    )
    recipe = detect_recipe(tmp_path)
    assert (recipe.kind, recipe.language, recipe.executable, recipe.program) == (
        "cmake",
        "c",
        "executable",
        "tool",
    )
    assert "--target tool" in recipe.build[1] and "-name 'tool'" in recipe.build[2]
    assert "/cov-build" in recipe.coverage_build[0] and "--coverage" in recipe.coverage_build[0]
    assert "BUILD_SHARED_LIBS=OFF" in recipe.build[0]


def test_cmake_fetch_content_uses_what_debian_installs(tmp_path: Path) -> None:
    """cmaple's CMakeLists fetches googletest from GitHub, unreachable here."""
    fetch = "include(FetchContent)\nFetchContent_Declare(\n  googletest\n  URL https://github.com/x.zip\n)\n"
    _tree(tmp_path, {"CMakeLists.txt": f"project(tool C)\n{fetch}add_executable(tool m.c)\n", "m.c": ""})
    recipe = detect_recipe(tmp_path)
    assert recipe.packages == ["googletest"]
    for line in (recipe.build[0], recipe.coverage_build[0]):
        assert "-DFETCHCONTENT_SOURCE_DIR_GOOGLETEST=/usr/src/googletest" in line
        assert "-DFETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS" in line
    (tmp_path / "CMakeLists.txt").write_text("project(tool C)\nadd_executable(tool m.c)\n")
    plain = detect_recipe(tmp_path)
    assert plain.packages == [] and "FETCHCONTENT" not in plain.build[0]


def test_several_programs_build_the_first_unless_one_is_chosen(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    meson = "project('suite', 'c')\nexecutable('aa', 'a.c')\nexecutable('bb', 'b.c')\n"
    _tree(tmp_path, {"meson.build": meson})
    assert "-name 'aa'" in detect_recipe(tmp_path).build[2]
    assert "several programs (aa, bb)" in caplog.text and "--executable" in caplog.text
    assert (
        "-name 'bb'" in detect_recipe(tmp_path, "bb").build[2]
        and detect_recipe(tmp_path, "bb").program == "bb"
    )
    assert "-name 'aa'" in detect_recipe(tmp_path, package="aa").build[2]
    (tmp_path / "taskfoundry.yaml").write_text("executable: bb\n")
    recipe = detect_recipe(tmp_path)
    assert "-name 'bb'" in recipe.build[2] and recipe.executable == "executable"
    with pytest.raises(BuildError, match=r"no program 'cc' \(found: aa, bb\)"):
        detect_recipe(tmp_path, "cc")


def test_meson_out_of_tree_coverage(tmp_path: Path) -> None:
    _tree(tmp_path, {"meson.build": "project('m', 'cpp')\nexecutable('m', 'm.cpp')\n", "m.cpp": ""})
    recipe = detect_recipe(tmp_path)
    assert (recipe.kind, recipe.language) == ("meson", "cpp")
    assert "-Db_coverage=true" in recipe.coverage_build[0] and "/cov-build" in recipe.coverage_build[0]
    assert "--default-library=static" in recipe.build[0]


def test_autotools_with_and_without_configure(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "configure.ac": "AC_INIT([greet], [1.0])\n",
            "Makefile.am": "SUBDIRS = src\n",
            "src/Makefile.am": "bin_PROGRAMS =\nlib_LTLIBRARIES =\ninclude tools/Makemodule.am\n",
            "src/tools/Makemodule.am": "bin_PROGRAMS += greet-admin \\\n\tgreet\n",
        },
    )
    recipe = detect_recipe(tmp_path)
    assert recipe.kind == "autotools" and recipe.build[0] == "autoreconf -fi"
    assert "--disable-shared" in recipe.build[1] and "-name 'greet'" in recipe.build[3]
    assert recipe.program == "greet"
    (tmp_path / "configure").write_text("#!/bin/sh\n# Generated by GNU Autoconf 2.71\n")
    recipe = detect_recipe(tmp_path)
    assert recipe.build[0].startswith("./configure --disable-shared")
    assert "CFLAGS='-O0 -g -fcommon --coverage'" in recipe.coverage_build[0]
    (tmp_path / "configure.ac").write_text("AC_INIT([greet], [1.0])\n  AM_GNU_GETTEXT([external])\n")
    assert detect_recipe(tmp_path).packages == []  # configure is there: no autoreconf, no autopoint
    (tmp_path / "configure").unlink()
    assert detect_recipe(tmp_path).packages == ["autopoint"]


def test_a_gnulib_bootstrap_tree_is_bootstrapped_from_debian_s_gnulib(tmp_path: Path) -> None:
    """Debian's libidn2 is a git snapshot: no configure, gnulib's ./bootstrap. autoreconf
    alone stopped at "AC_INIT should be called with package and version arguments"."""
    _tree(tmp_path, {"configure.ac": "AC_INIT([idn2], m4_esyscmd([build-aux/git-version-gen .v]))\n"})
    (tmp_path / "src").mkdir()
    (tmp_path / "src/Makefile.am").write_text("bin_PROGRAMS = idn2\n")
    assert detect_recipe(tmp_path).build[0] == "autoreconf -fi"  # no bootstrap: as before
    (tmp_path / "bootstrap").write_text("#!/bin/sh\n")
    (tmp_path / "bootstrap.conf").write_text("GNULIB_REVISION=c89cd2fbd3b9\n")
    recipe = detect_recipe(tmp_path)
    assert recipe.build[:2] == recipe.coverage_build[:2] == GNULIB_PREPARE and "gnulib" in recipe.packages
    assert (
        "git clone -q /usr/share/gnulib/gnulib.bundle" in recipe.build[0]
        and "--copy --gen" in recipe.build[1]
    )
    (tmp_path / "configure").write_text("#!/bin/sh\n# Generated by GNU Autoconf 2.72\n")
    assert detect_recipe(tmp_path).build[0].startswith("./configure")  # a release tarball's tree


def test_hand_written_configure_gets_no_autoconf_options(tmp_path: Path) -> None:
    _tree(tmp_path, {"configure": "#!/bin/sh\npkgname=lz\n", "Makefile.in": "all: lz\n", "main.cc": ""})
    recipe = detect_recipe(tmp_path)
    assert (recipe.kind, recipe.language, recipe.build[0]) == ("autotools", "cpp", "./configure")
    assert "-name 'lz'" in recipe.build[2]


def test_cargo_bins_and_workspace(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "Cargo.toml": "[workspace]\nmembers = ['crates/*']\n",
            "crates/core/Cargo.toml": "[package]\nname = 'core'\n",
            "crates/core/src/lib.rs": "",
            "crates/cli/Cargo.toml": "[package]\nname = 'mytool'\n",
            "crates/cli/src/main.rs": "",
            "crates/cli/src/bin/extra.rs": "",
        },
    )
    recipe = detect_recipe(tmp_path, package="mytool")
    assert recipe.executable == "target/release/mytool"
    assert detect_recipe(tmp_path, package="other").executable == "target/release/mytool"  # first


def test_a_crate_linking_a_system_library_gets_its_headers(tmp_path: Path) -> None:
    """ripcalc's openssl-sys found no libssl; libz-sys builds its bundled copy, so adds none."""
    lock = 'version = 4\n[[package]]\nname = "openssl-sys"\n[[package]]\nname = "libz-sys"\n'
    _tree(tmp_path, {"Cargo.toml": "[package]\nname = 'calc'\n", "src/main.rs": "", "Cargo.lock": lock})
    recipe = detect_recipe(tmp_path)
    # and what Debian's static libcrypto.a needs, linked in whole for the static gold (ripcalc:
    # "undefined reference to `ZSTD_initCStream'", then a dynamic gold)
    assert recipe.packages == ["libssl-dev", "libzstd-dev", "zlib1g-dev"]
    assert "pkg-config --static --libs-only-l openssl" in recipe.build[0]
    assert "link-arg=-l:lib%s.a" in recipe.build[0] and "crt-static${tf_link:-}" in recipe.build[0]
    (tmp_path / "Cargo.lock").write_text(lock.replace("openssl-sys", "openssl"))
    plain = detect_recipe(tmp_path)
    assert plain.packages == [] and "pkg-config" not in plain.build[0]


def test_go_program_under_cmd(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "go.mod": "module example.com/kit/v2\n",
            "lib.go": "package kit\n",
            "cmd/kit/main.go": "package main\n",
            "cmd/kit/main_test.go": "package main\n",
            "vendor/modules.txt": "",
        },
    )
    recipe = detect_recipe(tmp_path)
    assert recipe.build == ["GOPROXY=off GOFLAGS=-mod=vendor go build -trimpath -o kit ./cmd/kit"]


def test_python_console_script(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'Hello-Tool'\n[project.scripts]\n"
            "hello-tool = 'hello_tool.cli:main'\nhelper = 'hello_tool.cli:aux'\n",
            "src/hello_tool/cli.py": "",
        },
    )
    recipe = detect_recipe(tmp_path)
    assert (recipe.kind, recipe.coverage, recipe.source_visible) == ("python", "python", True)
    assert "import hello_tool.cli as _m" in recipe.build[2] and "-o executable" in recipe.build[-1]
    wrapper = recipe.coverage_build[-2]
    assert 'PYTHONPATH="/cov/src' in wrapper and "coverage run --parallel-mode" in wrapper


def test_the_coverage_run_imports_the_package_where_the_tree_keeps_it(tmp_path: Path) -> None:
    """fontTools' layout (ufomerge): the package under Lib/. Imported from /cov alone, the
    coverage run used pip's copy in site-packages and measured no line of the source."""
    pyproject = "[project]\nname = 'ufomerge'\n[project.scripts]\nufomerge = 'ufomerge.cli:main'\n"
    files = {"pyproject.toml": pyproject, "Lib/ufomerge/__init__.py": "", "tests/ufomerge/__init__.py": ""}
    _tree(tmp_path, files)
    assert 'PYTHONPATH="/cov/Lib${' in detect_recipe(tmp_path).coverage_build[-2]
    (tmp_path / "ufomerge").mkdir()  # a flat copy is shallower: it is the one imported
    (tmp_path / "ufomerge" / "__init__.py").write_text("")
    assert 'PYTHONPATH="/cov${' in detect_recipe(tmp_path).coverage_build[-2]


def test_python_setup_cfg_and_setup_py(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "setup.cfg": "[metadata]\nname = fmt\n[options.entry_points]\nconsole_scripts =\n"
            "    fmtx = fmt.main:run\n",
            "setup.py": "from setuptools import setup\nsetup()\n",
        },
    )
    assert "import fmt.main as _m" in detect_recipe(tmp_path).build[2]
    (tmp_path / "setup.cfg").unlink()
    (tmp_path / "setup.py").write_text("setup(entry_points={'console_scripts': ['sq = sq.cli:go']})\n")
    assert "import sq.cli as _m" in detect_recipe(tmp_path).build[2]


def test_developer_makefile_does_not_hide_a_python_project(tmp_path: Path) -> None:
    pyproject = "[project]\nname = 'sqlq'\n[project.scripts]\nsqlformat = 'sqlq.cli:main'\n"
    _tree(tmp_path, {"Makefile": "help:\n\techo make test\n", "pyproject.toml": pyproject})
    assert detect_recipe(tmp_path).kind == "python"


def test_a_program_copied_to_executable_keeps_its_own_name_for_its_docs(tmp_path: Path) -> None:
    """A meson, cmake or autotools build copies its program to `executable`, and the build's
    program name was that: the explorer read no documented invocation of appstream-generator
    (`appstream-generator process chromodoris`), and the harvest's shim had the wrong name."""
    from taskfoundry.kinds.program.testgen.inputs import readme_examples
    from taskfoundry.pipeline.results import BuildStage

    readme = "Run it:\n```sh\nasgen --secret-mode\n```\n"
    _tree(
        tmp_path, {"meson.build": "project('asgen', 'c')\nexecutable('asgen', 'a.c')\n", "README.md": readme}
    )
    recipe = detect_recipe(tmp_path)
    build = BuildStage(
        base_image="b", image="i", built=True, recipe=recipe, build_sh="", gold_sha256="", log=tmp_path
    )
    assert build.program == "asgen"
    assert [e.argv for e in readme_examples(tmp_path, {build.program, "executable"})] == [("--secret-mode",)]
    # the name as it was (the defence off): the docs' invocation is not the program's
    assert readme_examples(tmp_path, {"executable"}) == []
    assert (
        BuildStage.model_validate(
            build.model_dump() | {"recipe": recipe.model_dump() | {"program": None}}
        ).program
        == "executable"
    )
