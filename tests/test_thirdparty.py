from pathlib import Path

from taskfoundry.testgen.thirdparty import ALWAYS, gnulib_dirs, third_party_prefixes


def test_plain_repository_excludes_only_vendored_trees(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()  # a project's own lib/ is first-party
    assert third_party_prefixes(tmp_path) == ALWAYS


def test_gnulib_source_base_from_gnulib_cache(tmp_path: Path) -> None:
    (tmp_path / "m4").mkdir()
    (tmp_path / "m4" / "gnulib-cache.m4").write_text("gl_LOCAL_DIR([gl])\ngl_SOURCE_BASE([gnu])\n")
    assert gnulib_dirs(tmp_path) == ["gnu/"]
    assert "gnu/" in third_party_prefixes(tmp_path)


def test_gnulib_comp_without_cache_defaults_to_lib(tmp_path: Path) -> None:
    (tmp_path / "m4").mkdir()
    (tmp_path / "m4" / "gnulib-comp.m4").write_text("AC_DEFUN([gl_EARLY], [])\n")
    (tmp_path / "gnulib-tests").mkdir()
    assert gnulib_dirs(tmp_path) == ["lib/", "gnulib-tests/"]


def test_gnulib_comp_source_base_variable(tmp_path: Path) -> None:
    (tmp_path / "m4").mkdir()
    (tmp_path / "m4" / "gnulib-comp.m4").write_text("  gl_source_base='gl/lib'\n")
    assert gnulib_dirs(tmp_path) == ["gl/lib/"]


def test_probe_runner_leaves_excluded_prefixes_out() -> None:
    from taskfoundry.assets import probe_runner

    job = {"exclude": ["lib/", "target/"]}
    assert probe_runner.first_party("/cov/src/hello.c", "/cov", probe_runner.excluded(job)) == "src/hello.c"
    assert probe_runner.first_party("/cov/lib/xalloc.c", "/cov", probe_runner.excluded(job)) is None
    assert probe_runner.first_party("/usr/include/stdio.h", "/cov") is None
    assert probe_runner.first_party("/cov/vendor/x.go", "/cov", probe_runner.excluded({})) is None
