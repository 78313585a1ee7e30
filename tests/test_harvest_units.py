"""The recording shim run for real on this host, and the host side that turns its log into probes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from taskfoundry.assets import asset
from taskfoundry.builders.recipe import Recipe
from taskfoundry.kinds.program.testgen.harvest import data_dirs, own_test_command, to_probes

REAL = """#!/bin/sh
# stands for the program: echoes its arguments, its stdin, and exits with $CODE
echo "args: $*"
cat
[ -n "${KILL:-}" ] && kill -"$KILL" $$
exit "${CODE:-0}"
"""


@pytest.fixture()
def shim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    real = tmp_path / "real"
    real.write_text(REAL)
    real.chmod(0o755)
    log = tmp_path / "calls.jsonl"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"real": str(real), "log": str(log)}))
    path = tmp_path / "bin" / "prog"
    path.parent.mkdir()
    path.write_bytes(asset("program/harvest_shim.py"))
    path.chmod(0o755)
    monkeypatch.setenv("TF_HARVEST_CONFIG", str(config))
    return path, log


def _calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_the_shim_records_a_call_and_hands_it_on_unchanged(shim: tuple[Path, Path], tmp_path: Path) -> None:
    path, log = shim
    data = tmp_path / "work" / "in.txt"
    data.parent.mkdir()
    data.write_text("alpha\n")
    run = subprocess.run(
        [str(path), "-x", str(data), "--font=in.txt"],
        input=b"from stdin\n",
        capture_output=True,
        cwd=data.parent,
        env={**os.environ, "CODE": "3"},
    )
    assert run.returncode == 3
    assert run.stdout == f"args: -x {data} --font=in.txt\nfrom stdin\n".encode()
    (call,) = _calls(log)
    assert call["argv"] == ["-x", str(data), "--font=in.txt"]
    assert call["stdin_complete"] is True
    # in.txt twice (its absolute path, and relative in the working directory): one copy
    (probe,), unreplayable = to_probes(_calls(log), cap=10)
    assert unreplayable == 0
    assert probe.origin == "harvested"
    assert probe.stdin == "from stdin\n"
    # the absolute path becomes a copy in the scratch directory; the relative one stays
    assert probe.args == ("-x", "in.txt", "--font=in.txt")
    assert dict(probe.files) == {"in.txt": "alpha\n"}


def test_the_shim_dies_of_the_programs_signal_and_records_no_stdin_from_a_terminal_less_run(
    shim: tuple[Path, Path], tmp_path: Path
) -> None:
    path, log = shim
    run = subprocess.run(
        [str(path), "a b"], stdin=subprocess.DEVNULL, capture_output=True, env={**os.environ, "KILL": "TERM"}
    )
    assert run.returncode == -signal.SIGTERM
    (call,) = _calls(log)
    assert call["stdin"] == "" and call["argv"] == ["a b"]


def test_a_stdin_left_open_is_handed_on_but_not_replayed(
    shim: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, log = shim
    code = asset("program/harvest_shim.py").decode().replace("STDIN_WAIT = 10.0", "STDIN_WAIT = 0.5")
    path.write_text(code)
    proc = subprocess.Popen([str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(b"early\n")
    proc.stdin.flush()
    import time

    time.sleep(1.0)  # past the shim's wait: the call is recorded as incomplete
    proc.stdin.write(b"late\n")
    proc.stdin.close()
    assert proc.stdout is not None
    out = proc.stdout.read()
    assert proc.wait(timeout=20) == 0
    assert out == b"args: \nearly\nlate\n"
    probes, unreplayable = to_probes(_calls(log), cap=10)
    assert (probes, unreplayable) == ([], 1)


def test_a_directory_of_the_installed_data_is_mapped_to_where_the_install_put_it() -> None:
    dirs = data_dirs(
        ["usr/local/share/figlet/big.flf", "usr/local/share/figlet/small.flf", "usr/share/x/y.txt"]
    )
    call = {
        "argv": ["-d", "fonts", "-f", "big", "hi"],
        "stdin": "",
        "dirs": {"1": ["", "fonts", ["big.flf", "small.flf", "Makefile"]]},
    }
    other = {**call, "argv": ["-d", "elsewhere"], "dirs": {"1": ["", "elsewhere", ["a.c", "b.c", "big.flf"]]}}
    probes, _ = to_probes([call, other, call], cap=10, dirs=dirs)
    assert [p.args for p in probes] == [
        ("-d", "/usr/local/share/figlet", "-f", "big", "hi"),
        ("-d", "elsewhere"),
    ]
    assert len(to_probes([call, other], cap=1, dirs=dirs)[0]) == 1


def _recipe(kind: str) -> Recipe:
    return Recipe(
        kind=kind, language="c", build=[], coverage_build=[], executable="p", coverage_executable="p"
    )


@pytest.mark.parametrize(
    ("kind", "files", "expected"),
    [
        ("make", {"Makefile": "all:\n\ncheck: all\n\tsh t.sh\n"}, "make -k check"),
        ("make", {"Makefile": "all:\ntest:\n\tsh t.sh\n"}, "make -k test"),
        ("make", {"Makefile": "all:\nregress:: bins\n\tsh t.sh\n"}, "make -k regress"),
        ("make", {"Makefile": "all:\n", "run-tests.sh": "true\n"}, "sh run-tests.sh"),
        ("autotools", {"Makefile.am": "bin_PROGRAMS = p\n"}, "make -k check"),
        ("make", {"Makefile": "all:\n"}, None),
        (
            "cmake",
            {"CMakeLists.txt": "add_test(NAME a COMMAND p)\n"},
            "ctest --test-dir _build --output-on-failure",
        ),
        ("cmake", {"CMakeLists.txt": "project(p)\n"}, None),
        ("go", {"main.go": "package main\n", "main_test.go": "package main\n"}, "go test ./..."),
        ("meson", {"meson.build": "subdir('test')\n", "test/meson.build": "test('a', p)\n"}, "meson test"),
        ("meson", {"meson.build": "executable('p', 'p.c')\n"}, None),
        ("cargo", {"src/main.rs": "fn main() {}\n"}, None),
        ("cargo", {"src/main.rs": "#[test]\nfn t() {}\n"}, "cargo test --offline -q --no-run"),
    ],
)
def test_the_projects_own_test_command_is_found_by_kind(
    tmp_path: Path, kind: str, files: dict[str, str], expected: str | None
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = own_test_command(tmp_path, _recipe(kind))
    assert (found is None) if expected is None else (found is not None and found.startswith(expected))


def test_tests_that_are_compiled_first_get_the_compile_time_too() -> None:
    from taskfoundry.kinds.program.settings import HarvestConfig
    from taskfoundry.kinds.program.testgen.harvest import budget

    config = HarvestConfig(seconds=300, compile_seconds=600)
    assert budget(_recipe("cargo"), config) == budget(_recipe("go"), config) == 900
    assert budget(_recipe("make"), config) == budget(_recipe("python"), config) == 300


def test_a_bsd_makefile_s_tests_run_with_the_make_that_built_it(tmp_path: Path) -> None:
    """lowdown's `make regress` stopped at "missing separator": its Makefile is BSD make's."""
    (tmp_path / "Makefile").write_text(".if ${X} == 1\n.endif\nregress: lowdown\n\tsh regress.sh\n")
    recipe = _recipe("autotools").model_copy(update={"packages": ["bmake"]})
    assert own_test_command(tmp_path, recipe) == "bmake -k regress"
    assert own_test_command(tmp_path, _recipe("make")) == "make -k regress"


def test_a_debian_go_source_s_tests_run_in_gopath_mode_as_it_was_built(tmp_path: Path) -> None:
    """gobuster's `go test ./...` in module mode: "go.mod requires go >= 1.25 (running go 1.24)"."""
    files = {"go.mod": "module github.com/OJ/gobuster/v3\n\ngo 1.25\n", "main.go": "package main\n"}
    for name, text in {**files, "cli/x_test.go": "package cli\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    debian = _recipe("go").model_copy(update={"build_depends": ["golang-github-fatih-color-dev"]})
    command = own_test_command(tmp_path, debian)
    assert command is not None and command.endswith(" go test ./...")
    assert "ln -sfn ../../../../.. .tf-gopath/src/github.com/OJ/gobuster/v3" in command
    assert "GO111MODULE=off" in command
    assert own_test_command(tmp_path, _recipe("go")) == "go test ./..."  # a module build: as it is


def test_the_shim_is_standard_library_python() -> None:
    # it runs under whatever python3 the build image has: no third-party import
    code = asset("program/harvest_shim.py").decode()
    imports = {line.split()[1] for line in code.splitlines() if line.startswith(("import ", "from "))}
    assert imports <= set(sys.stdlib_module_names)


def test_a_call_whose_arguments_are_not_utf8_is_not_replayed(shim: tuple[Path, Path], tmp_path: Path) -> None:
    path, log = shim
    odd = os.fsencode(tmp_path) + b"/caf\xe9.txt"  # a Latin-1 file name, as b3sum's tests make
    with open(odd, "wb") as handle:
        handle.write(b"x\n")
    run = subprocess.run([os.fsencode(path), odd], capture_output=True, stdin=subprocess.DEVNULL)
    assert run.returncode == 0 and run.stdout.startswith(b"args: " + odd)  # handed on unchanged
    probes, unreplayable = to_probes(_calls(log), cap=10)
    assert (probes, unreplayable) == ([], 1)


TOY_CLI = """import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="toy")
    parser.add_argument("--upper", action="store_true")
    parser.add_argument("path")
    args = parser.parse_args(argv)
    with open(args.path) as handle:
        text = handle.read()
    sys.stdout.write(text.upper() if args.upper else text)
    return 0


class Command:  # click's shape: CliRunner().invoke(cli, args) calls cli.main(args=...)
    def main(self, args=None, prog_name=None):
        return main(args)


cli = Command()
"""
TOY_TESTS = """import sys

from toy.cli import cli, main


def test_upper(tmp_path, capsys):
    (tmp_path / "in.txt").write_text("abc\\n")
    assert main(["--upper", str(tmp_path / "in.txt")]) == 0
    assert capsys.readouterr().out == "ABC\\n"


def test_argv_set_by_the_test(tmp_path, monkeypatch, capsys):
    (tmp_path / "b.txt").write_text("xyz\\n")
    monkeypatch.setattr(sys, "argv", ["toy", str(tmp_path / "b.txt")])
    main()
    assert capsys.readouterr().out == "xyz\\n"


def test_click_shaped(tmp_path, capsys):
    (tmp_path / "c.txt").write_text("q\\n")
    cli.main(args=["--upper", str(tmp_path / "c.txt")], prog_name="toy")
    assert capsys.readouterr().out == "Q\\n"
"""


@pytest.mark.parametrize("entry", ["toy.cli:main", "toy.cli:cli"])
def test_a_python_project_s_in_process_calls_are_harvested(tmp_path: Path, entry: str) -> None:
    """tox-ini-fmt's tests call its entry point inside pytest: the shim on PATH saw none of
    them. The plugin wraps the entry point (a click command's `main`) and records each call."""
    from taskfoundry.kinds.program.testgen.harvest import PYTEST_PLUGIN

    project, home = tmp_path / "toy", tmp_path / "home"
    for name, text in {"toy/__init__.py": "", "toy/cli.py": TOY_CLI, "tests/test_toy.py": TOY_TESTS}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    home.mkdir()
    (home / f"{PYTEST_PLUGIN}.py").write_bytes(asset("program/harvest_pytest.py"))
    (home / "shim").write_bytes(asset("program/harvest_shim.py"))
    (home / "config.json").write_text(json.dumps({"real": "/bin/false", "log": str(home / "calls.jsonl")}))
    env = {
        **os.environ,
        "PYTHONPATH": f"{home}:{project}",
        "TF_HARVEST_ENTRY": entry,
        "TF_HARVEST_SHIM": str(home / "shim"),
        "TF_HARVEST_CONFIG": str(home / "config.json"),
    }

    def run(*plugin: str) -> list[object]:
        (home / "calls.jsonl").write_text("")
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, "tests"]
        done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr  # the project's tests still pass
        probes, _ = to_probes(_calls(home / "calls.jsonl"), cap=10)
        return [(p.args, p.files) for p in probes]

    recorded = run("-p", PYTEST_PLUGIN)
    assert (("--upper", "c.txt"), (("c.txt", "q\n"),)) in recorded  # the click-shaped call
    if entry == "toy.cli:main":
        assert (("--upper", "in.txt"), (("in.txt", "abc\n"),)) in recorded
        assert (("b.txt",), (("b.txt", "xyz\n"),)) in recorded  # sys.argv as the test set it
        assert len(recorded) == 3  # pytest's own argv is no call
    assert run() == []  # the defence off: without the plugin nothing is recorded


def test_a_python_project_s_tests_load_the_plugin_for_its_entry_point(tmp_path: Path) -> None:
    """The detector records the console script's entry point on the recipe; the harvest's
    pytest loads the plugin for it (tox-ini-fmt's build named its program `executable`)."""
    from taskfoundry.builders.detect import detect_recipe

    (tmp_path / "tests").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "toy"\n[project.scripts]\ntoy = "toy.cli:main"\n'
    )
    recipe = detect_recipe(tmp_path)
    assert recipe.entry_point == "toy.cli:main" and recipe.executable == "executable"
    command = own_test_command(tmp_path, recipe)
    assert command is not None and "TF_HARVEST_ENTRY=toy.cli:main " in command
    assert command.endswith("-p tf_pyharvest tests")  # the test directory, not src/'s test_*.py
    plain = own_test_command(tmp_path, recipe.model_copy(update={"entry_point": None}))
    flags = "-q -p no:cacheprovider --continue-on-collection-errors"
    assert plain == f"/opt/tf-cov-venv/bin/python -m pytest {flags} tests"
