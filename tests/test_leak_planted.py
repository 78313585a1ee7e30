"""One regression test per leak class: plant it in a clean fake cleanroom and scan.

A single small cleanroom image is built once (the real builder, a tiny C program compiled
with gcc in a base container); every case plants its leak in a fresh container of it
and scans that running container, so no image is built per case.
"""

from __future__ import annotations

import hashlib
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry.assets import asset
from taskfoundry.images.build import build_image
from taskfoundry.kinds.program.cleanroom.audit import audit_command
from taskfoundry.kinds.program.cleanroom.image import build_cleanroom
from taskfoundry.kinds.program.cleanroom.leakscan import LeakReport, scan
from taskfoundry.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker

FUNCTION = textwrap.dedent("""\
    static int tally_line(const char *line, struct counts *c, int mode)
    {
        int in_word = 0;
        size_t i;
        int upper = 0;
        int digits = 0;

        c->lines++;
        for (i = 0; line[i] != '\\0'; i++) {
            unsigned char ch = (unsigned char)line[i];
            c->chars++;
            if (isupper(ch)) {
                upper++;
            }
            if (isdigit(ch)) {
                digits++;
            }
            if (isspace(ch)) {
                if (in_word) {
                    c->words++;
                    in_word = 0;
                }
            } else if (!in_word) {
                in_word = 1;
            }
        }
        if (in_word) {
            c->words++;
        }
        if (mode == MODE_UPPER) {
            c->special += upper;
        } else if (mode == MODE_DIGITS) {
            c->special += digits;
        } else if (mode == MODE_BOTH) {
            c->special += upper + digits;
        }
        if (i > c->longest) {
            c->longest = i;
        }
        return in_word;
    }
    """)
SOURCE = (
    textwrap.dedent("""\
    /* tally: count lines, words and characters of standard input. */
    #include <ctype.h>
    #include <stdio.h>
    #include <string.h>

    #define MODE_NONE 0
    #define MODE_UPPER 1
    #define MODE_DIGITS 2
    #define MODE_BOTH 3

    struct counts {
        size_t lines, words, chars, special, longest;
    };

    """)
    + FUNCTION
    + textwrap.dedent("""\

    int main(int argc, char **argv)
    {
        char buf[4096];
        struct counts c = {0, 0, 0, 0, 0};
        int mode = MODE_NONE;
        if (argc > 1 && strcmp(argv[1], "--help") == 0) {
            puts("usage: tally [--upper|--digits|--both] < FILE");
            return 0;
        }
        if (argc > 1 && strcmp(argv[1], "--upper") == 0) mode = MODE_UPPER;
        if (argc > 1 && strcmp(argv[1], "--digits") == 0) mode = MODE_DIGITS;
        if (argc > 1 && strcmp(argv[1], "--both") == 0) mode = MODE_BOTH;
        while (fgets(buf, sizeof buf, stdin)) tally_line(buf, &c, mode);
        printf("%zu %zu %zu %zu %zu\\n", c.lines, c.words, c.chars, c.special, c.longest);
        return 0;
    }
    """)
)
README = textwrap.dedent("""\
    # tally

    Counts lines, words and characters of standard input and prints them on one line:
    lines, words, characters, the special count and the longest line.

    ```sh
    tally --upper < notes.txt
    ```
    """)
HELP = "usage: tally [--upper|--digits|--both] < FILE\n"
EXPECTED = "3 12 80 4 31\n" * 6  # a hidden test's expected output (over the 64-byte floor)
HIDDEN_TEST = textwrap.dedent("""\
    import subprocess

    def test_counts():
        out = subprocess.run(["./executable"], input=b"a b\\n", capture_output=True).stdout
        assert out == b"1 2 4 0 4\\n"
    """)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tally")
    files = {
        "src/tally.c": SOURCE,
        "README.md": README,
        "tests/expected/counts.out": EXPECTED,
        "tests/test_cli.py": HIDDEN_TEST,
        "Makefile": "tally: src/tally.c\n\tcc -O2 -o $@ $<\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def image(docker_client, base_image, source: Path, tmp_path_factory) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(tag, gold sha256) of a clean fake cleanroom, made with the real builder."""
    with DockerSandbox(base_image, client=docker_client) as box:
        box.put_file(SOURCE.encode(), "/tmp/tally.c")
        res = box.exec("gcc -O2 -o /tmp/tally /tmp/tally.c", timeout=120, user="0:0")
        assert res.ok, res.text()
        gold = box.get_file("/tmp/tally")
    docs = {"README.md": README, "docs/usage/tally.txt": HELP}
    workdir = tmp_path_factory.mktemp("cleanroom")
    tag, _ = build_cleanroom(docker_client, base_image, gold, docs, workdir, "taskfoundry-test/leak-tally")
    return tag, hashlib.sha256(gold).hexdigest()


@pytest.fixture
def box(docker_client, image: tuple[str, str]) -> Iterator[DockerSandbox]:  # type: ignore[no-untyped-def]
    with DockerSandbox(image[0], client=docker_client) as sandbox:
        yield sandbox


def _root(box: DockerSandbox, script: str) -> None:
    res = box.exec(script, timeout=120, user="0:0")
    assert res.ok, res.text()


def _worker(box: DockerSandbox, script: str) -> None:
    res = box.exec(script, timeout=120, workdir="/workspace", env={"HOME": "/home/worker"})
    assert res.ok, res.text()


def _scan(box: DockerSandbox, image: tuple[str, str], source: Path | None) -> LeakReport:
    return scan(box, image[0], image[1], source=source)


def _kinds(report: LeakReport, path: str) -> set[str]:
    return {f.kind for f in report.findings if f.path == path}


def test_clean_image_has_no_finding(box: DockerSandbox, image: tuple[str, str], source: Path) -> None:
    report = _scan(box, image, source)
    assert report.findings == [] and report.verdict == "clean", report.findings
    assert report.source_checked and report.texts_parsed > 0 and report.files_scanned > 1000


def test_source_renamed_to_txt_is_parsed_as_source(box: DockerSandbox, image: tuple[str, str]) -> None:
    box.put_file(SOURCE.replace("tally", "counter").encode(), "/workspace/notes.txt")
    report = _scan(box, image, None)  # no source given: found by the parse alone
    found = [f for f in report.findings if f.path == "/workspace/notes.txt"]
    assert [f.kind for f in found] == ["source_file"] and "parses as c" in found[0].evidence
    assert report.verdict == "leaky"


def test_source_by_extension_build_file_and_copy_of_a_source_file(
    box: DockerSandbox, image: tuple[str, str], source: Path
) -> None:
    box.put_file(SOURCE.encode(), "/srv/tally.c")
    box.put_file(b"all:\n\tcc -o tally tally.c\n", "/workspace/Makefile")
    report = _scan(box, image, source)
    assert _kinds(report, "/srv/tally.c") == {"source_file", "source_copy"}
    assert _kinds(report, "/workspace/Makefile") == {"build_file"}


def test_target_and_build_trees(box: DockerSandbox, image: tuple[str, str]) -> None:
    _worker(
        box,
        "mkdir -p target/release/deps && echo x > target/release/deps/tally-1.d"
        " && mkdir -p /tmp/build/CMakeFiles && echo y > /tmp/build/CMakeFiles/Makefile2",
    )
    report = _scan(box, image, None)
    assert _kinds(report, "/workspace/target") == {"build_tree"}
    assert _kinds(report, "/tmp/build") == {"build_tree"}


def test_cargo_and_go_caches(box: DockerSandbox, image: tuple[str, str]) -> None:
    _worker(
        box,
        "cd ~ && mkdir -p .cargo/registry/src/index/itoa-1.0.0 .cache/go-build/ab"
        " go/pkg/mod/example.com/lib@v1.0.0"
        " && echo 'pub fn f() {}' > .cargo/registry/src/index/itoa-1.0.0/lib.rs"
        " && echo obj > .cache/go-build/ab/abcdef-d"
        " && echo 'package lib' > go/pkg/mod/example.com/lib@v1.0.0/lib.go",
    )
    report = _scan(box, image, None)
    assert _kinds(report, "/home/worker/.cargo") == {"build_cache"}
    assert _kinds(report, "/home/worker/.cache") == {"build_cache"}
    assert _kinds(report, "/home/worker/go/pkg/mod") == {"build_cache"}


def test_readable_copy_of_the_binary(box: DockerSandbox, image: tuple[str, str]) -> None:
    _root(box, "cp /workspace/executable /tmp/.backup && chmod 644 /tmp/.backup")
    report = _scan(box, image, None)
    assert _kinds(report, "/tmp/.backup") == {"binary_copy"}


def test_gold_on_path_and_preloaded(box: DockerSandbox, image: tuple[str, str]) -> None:
    _root(
        box,
        "cp /workspace/executable /usr/local/bin/tally && chmod 111 /usr/local/bin/tally"
        " && ln -s /workspace/executable /usr/local/bin/t2"
        " && echo /workspace/executable > /etc/ld.so.preload",
    )
    report = _scan(box, image, None)
    assert _kinds(report, "/usr/local/bin/tally") == {"binary_copy", "gold_on_path"}
    assert _kinds(report, "/usr/local/bin/t2") == {"gold_on_path"}
    assert _kinds(report, "/workspace/executable") == {"gold_preload"}


def test_readable_or_worker_owned_gold(box: DockerSandbox, image: tuple[str, str]) -> None:
    _root(box, "chmod 755 /workspace/executable && chown worker /workspace/executable")
    report = _scan(box, image, None)
    kinds = _kinds(report, "/workspace/executable")
    assert kinds == {"executable_mode", "binary_copy", "executable_owner"}


def test_original_git_elsewhere(box: DockerSandbox, image: tuple[str, str]) -> None:
    _root(
        box,
        "mkdir -p /opt/tally && cd /opt/tally && git init -q && echo hi > a"
        " && git add a && git -c user.name=Jane -c user.email=j@x commit -qm one",
    )
    report = _scan(box, image, None)
    assert _kinds(report, "/opt/tally/.git") == {"foreign_git"}


def test_workspace_git_with_history(box: DockerSandbox, image: tuple[str, str]) -> None:
    _worker(
        box,
        "git remote add origin https://example.com/tally.git && echo more >> README.md"
        " && git -c user.name='Jane Dev' -c user.email=jane@example.com commit -qam two",
    )
    report = _scan(box, image, None)
    kinds = _kinds(report, "/workspace/.git")
    assert {"git_history", "git_author", "git_remote"} <= kinds


def test_workspace_git_with_dangling_source(box: DockerSandbox, image: tuple[str, str]) -> None:
    box.put_file(SOURCE.encode(), "/tmp/tally.c")
    _worker(box, "git hash-object -w /tmp/tally.c >/dev/null")
    _root(box, "rm /tmp/tally.c")
    report = _scan(box, image, None)
    assert _kinds(report, "/workspace/.git") == {"git_objects"}


def test_function_pasted_into_readme(box: DockerSandbox, image: tuple[str, str], source: Path) -> None:
    readme = box.get_file("/workspace/README.md").decode()
    pasted = readme + "\n## How it counts\n\n" + FUNCTION  # the 40-line function, no fence
    box.put_file(pasted.encode(), "/workspace/README.md")
    report = _scan(box, image, source)
    found = [f for f in report.findings if f.path == "/workspace/README.md"]
    assert [f.kind for f in found] == ["verbatim_source"]
    line = SOURCE.splitlines().index(FUNCTION.splitlines()[0]) + 1
    assert f"tokens verbatim from src/tally.c:{line}" in found[0].evidence


def test_hidden_test_file_and_asset(box: DockerSandbox, image: tuple[str, str], source: Path) -> None:
    _worker(box, "mkdir -p /tmp/eval/tests")
    box.put_file(HIDDEN_TEST.replace("a b", "c d").encode(), "/tmp/eval/tests/test_cli.py")
    box.put_file(EXPECTED.encode(), "/home/worker/counts.out")
    report = _scan(box, image, source)
    assert "hidden_test" in _kinds(report, "/tmp/eval/tests/test_cli.py")
    assert _kinds(report, "/home/worker/counts.out") == {"hidden_test"}


def test_other_users_proc_is_checked(box: DockerSandbox) -> None:
    """The /proc probe itself: root can read a worker process's environ, so the probe run as
    root must report it; run as the worker it must find nothing of root's."""

    code = asset("program/leak_scan.py")
    box.put_file(code, "/opt/probe.py")
    _worker(box, "setsid sleep 120 >/dev/null 2>&1 < /dev/null &")
    as_root = box.exec(["python3", "/opt/probe.py", "--proc"], timeout=60, user="0:0")
    assert as_root.ok and b"proc_readable" in as_root.stdout  # root lacks CAP_SYS_PTRACE: fd only
    as_worker = box.exec(["python3", "/opt/probe.py", "--proc"], timeout=60)
    assert as_worker.ok and as_worker.stdout == b"[]"


def test_audit_command_exit_codes(
    docker_client,
    image: tuple[str, str],
    source: Path,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    runner = CliRunner()
    clean = runner.invoke(audit_command, [image[0], "--source", str(source)])
    assert clean.exit_code == 0 and ": clean, 0 findings" in clean.output, clean.output
    assert "gold integrity: " in clean.output  # the worker's attacks, tried as well
    (tmp_path / "Dockerfile").write_text(
        f"FROM {image[0]}\nUSER root\n"
        "RUN cp /workspace/executable /tmp/copy && chmod 644 /tmp/copy\n"
        "USER worker\n"
    )
    leaky, _ = build_image(
        docker_client, tmp_path, "taskfoundry-test/leak-tally-leaky", tmp_path / "build.log"
    )
    res = runner.invoke(audit_command, [leaky, "--gold-sha256", image[1]])
    assert res.exit_code == 1 and "binary_copy" in res.output and "/tmp/copy" in res.output
    assert "leaky, 1 findings" in res.output
