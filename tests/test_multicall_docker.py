"""A multi-call program (uutils' diffutils, busybox: what it does depends on the name it is
called by) becomes a task that calls it by its own name: found in the cleanroom, written in the
suite (eval/tests/program.json), kept by the mutation stage's guard, and graded so. Without the
name every call answered "executable: utility not supported" (diffutils' 48 tests)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_solution_docker import rate

from taskfoundry.kinds.program.cleanroom import called_as as called_as_module
from taskfoundry.kinds.program.cleanroom.called_as import called_as
from taskfoundry.kinds.program.testgen.probes import install_runner
from taskfoundry.layout import WORKSPACE, WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

from conftest import PLUMBING_YAML, make_repo

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MULTI_C = r"""#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *base(const char *p) { const char *s = strrchr(p, '/'); return s ? s + 1 : p; }

static int ends(const char *s, const char *t) {
    size_t a = strlen(s), b = strlen(t);
    return a >= b && strcmp(s + a - b, t) == 0;
}

static int usage(const char *name) {
    printf("Usage: %s COMMAND [ARG]...\n\nCommands:\n"
           "  upper    print its arguments in upper case\n"
           "  count    count its arguments\n"
           "  rev      print its arguments reversed\n", name);
    return 0;
}

static int upper(int n, char **v) {
    for (int i = 0; i < n; i++) {
        for (char *p = v[i]; *p; p++) putchar(toupper((unsigned char)*p));
        putchar(i + 1 < n ? ' ' : '\n');
    }
    return 0;
}

static int count(int n, char **v) {
    (void)v;
    printf("%d\n", n);
    return n ? 0 : 1;
}

static int rev(int n, char **v) {
    for (int i = n - 1; i >= 0; i--) {
        for (size_t j = strlen(v[i]); j > 0; j--) putchar(v[i][j - 1]);
        putchar(i ? ' ' : '\n');
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *name = base(argv[0]), *util = name;
    if (ends(name, "multi")) {
        if (argc < 2) return usage(name);
        util = argv[1];
        argv++, argc--;
    }
    if (strcmp(util, "upper") == 0) return upper(argc - 1, argv + 1);
    if (strcmp(util, "count") == 0) return count(argc - 1, argv + 1);
    if (strcmp(util, "rev") == 0) return rev(argc - 1, argv + 1);
    fprintf(stderr, "%s: utility not supported\n", util);
    return 2;
}
"""
MAKEFILE = """multi: multi.c
\t$(CC) $(CFLAGS) -o multi multi.c

check: multi
\t./multi upper abc def
\t./multi rev hello world
\t./multi count a b c
"""
# a program that prints the name it is called by, its own name and the word "executable":
# the same program under either name, once the names are written alike
PLAIN_C = r"""#include <stdio.h>
int main(int argc, char **argv) {
    printf("Usage: %s [FILE]\nplain 1.0: an executable that prints its usage\n", argv[0]);
    return argc > 1;
}
"""
# a program whose every answer differs (a clock), whatever it is called
CLOCK_C = r"""#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    printf("%ld.%09ld\n", (long)t.tv_sec, t.tv_nsec);
    return 0;
}
"""


def _static(tmp_path: Path, name: str, source: str) -> bytes:
    (tmp_path / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-static", "-O1", "-o", tmp_path / name, tmp_path / f"{name}.c"], check=True)
    return (tmp_path / name).read_bytes()


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc on the host to compile the programs")
def test_only_a_program_that_answers_its_name_otherwise_is_called_by_it(  # type: ignore[no-untyped-def]
    base_image: str, docker_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    programs = {
        name: _static(tmp_path, name, src)
        for name, src in [("multi", MULTI_C), ("plain", PLAIN_C), ("clock", CLOCK_C)]
    }
    with DockerSandbox(base_image, SandboxLimits(), client=docker_client) as box:
        install_runner(box)
        for name, data in programs.items():
            box.put_file(data, f"/tmp/{name}", mode=0o755)
        found = {name: called_as(box, f"/tmp/{name}", name, 5.0) for name in programs}
        assert found == {
            "multi": f"{WORKSPACE}/multi",
            "plain": WORKSPACE_EXECUTABLE,
            "clock": WORKSPACE_EXECUTABLE,
        }
        # the names not written alike: the plain program's usage and version differ by them
        monkeypatch.setattr(
            called_as_module, "_seen", lambda out, names: (out.exit_code, out.stdout, out.stderr)
        )
        assert called_as(box, "/tmp/plain", "plain", 5.0) == f"{WORKSPACE}/plain"


@pytest.fixture(scope="module")
def multi_task(prefect_harness, base_image, tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from taskfoundry.cli import main

    repo = make_repo(tmp_path_factory.mktemp("src") / "multi", {"multi.c": MULTI_C, "Makefile": MAKEFILE})
    out = tmp_path_factory.mktemp("multi-out")
    args = ["build", str(repo), "--out", str(out), "--config", str(PLUMBING_YAML), "--max-probes", "80"]
    args += ["--mutants", "8"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    (task,) = (out / "tasks").iterdir()
    return task


def _suite(task: Path) -> tuple[Path, dict[str, bytes]]:
    (tarball,) = (task / "tests").glob("*.tar.gz")
    with tarfile.open(tarball) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    return tarball, files


def test_a_multi_call_program_s_task_calls_it_by_its_name(multi_task: Path, docker_client: Any) -> None:
    _, files = _suite(multi_task)
    (where,) = [n for n in files if n.endswith("eval/tests/program.json")]
    assert json.loads(files[where]) == {"called_as": "multi"}
    tests = b"".join(v for n, v in files.items() if n.rsplit("/", 1)[-1].startswith("test_"))
    assert b"utility not supported" not in tests or b"'upper'" in tests
    assert b"'upper'" in tests and b"'rev'" in tests  # the functions, not the error of a wrong name
    cleanroom = yaml.safe_load((multi_task / "task.yaml").read_text())["images"]["task_cleanroom"]
    note = docker_client.containers.run(
        cleanroom, ["cat", "/workspace/docs/REFERENCE.md"], remove=True
    ).decode()
    assert f"argv[0] set to `{WORKSPACE}/multi`" in note
    report = json.loads((multi_task / "reports" / "mutation.json").read_text())
    assert report["killed"] > 0  # the guard called each mutant by the name too
    assert rate(multi_task, multi_task / "solution.tar.gz", docker_client) == (1.0, None)


def test_without_its_name_the_reference_fails_the_suite(
    multi_task: Path, docker_client: Any, tmp_path: Path
) -> None:
    task = tmp_path / multi_task.name
    shutil.copytree(multi_task, task, symlinks=True)
    tarball, files = _suite(task)
    kept = tarball.parent / "kept.tar.gz"
    with tarfile.open(kept, "w:gz") as tar:
        for name, data in files.items():
            if not name.endswith("program.json"):
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(data), 0o755 if name.endswith(".sh") else 0o644
                tar.addfile(info, io.BytesIO(data))
    kept.replace(tarball)
    score, _ = rate(task, task / "solution.tar.gz", docker_client)
    assert score < 0.5
