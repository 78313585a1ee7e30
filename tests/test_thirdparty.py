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


def test_probe_runner_reads_python_coverage_in_process(tmp_path: Path) -> None:
    import subprocess
    import sys

    from taskfoundry.assets import probe_runner

    root, covdir = tmp_path / "cov", tmp_path / "data"
    (root / "pkg").mkdir(parents=True)
    covdir.mkdir()
    script = root / "pkg" / "main.py"
    script.write_text("import sys\n\nif len(sys.argv) > 5:\n    print('many')\nprint('done')\n")
    argv = [
        sys.executable,
        "-m",
        "coverage",
        "run",
        "--parallel-mode",
        "--rcfile=/dev/null",
        f"--data-file={covdir}/.coverage",
        str(script),
    ]
    subprocess.run(argv, check=True, capture_output=True)
    found = [str(p) for p in covdir.glob(".coverage.*")]
    covered, total = probe_runner.read_python_data({"cov_root": str(root)}, found)
    assert total == {"pkg/main.py": {1, 3, 4, 5}}
    assert covered == {"pkg/main.py": {1, 3, 5}}
    assert probe_runner.read_python({"cov_root": str(root), "exclude": ["pkg/"]}, str(covdir)) == ({}, {})
