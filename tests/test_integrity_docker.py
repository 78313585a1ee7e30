"""Execute-only, enforced: the worker's attacks on the gold, tried for real in a cleanroom image.

Each attack runs as `worker` in a container of a cleanroom image built the way the
cleanroom stage builds one, plain and under no-new-privileges with every capability
dropped. Against a static gold (what the build stage now makes) every attack is blocked;
each is also run with its defence off, to show it is the defence that stops it: the loader
attacks against a dynamically linked gold, the /proc, ptrace and core attacks against a
gold the worker may read (mode 0755 instead of 0111).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskfoundry.assets import asset
from taskfoundry.grading.goldcode import loadable_segments
from taskfoundry.images.layer import tag_as_root
from taskfoundry.kinds.program.cleanroom.elf import linkage
from taskfoundry.kinds.program.cleanroom.image import build_cleanroom
from taskfoundry.kinds.program.cleanroom.integrity import VARIANTS, check_integrity
from taskfoundry.kinds.program.cleanroom.reports import IntegrityReport
from taskfoundry.layout import REFERENCE_DIR, REFERENCE_EXECUTABLE, WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  const char *secret = "the gold's own algorithm";
  printf("%s %zu\n", argc > 1 ? argv[1] : "none", strlen(secret));
  return 0;
}
"""
# a gold that never exits on its own (a server, a REPL that ignores a closed stdin)
HANGS = r"""
#include <unistd.h>
int main(void) { for (;;) pause(); }
"""
REBUILDER = asset("program/gold_rebuilder.c")
LOADER_ATTACKS = ("ld_preload", "ld_audit", "fake_libc")
PROC_ATTACKS = ("proc_maps", "proc_exe", "proc_mem", "ptrace_peek", "core_dump")

# The dump itself, as a worker would make it: a preloaded constructor that copies the
# gold's executable mappings out of its own process (ProgramBench#44).
DUMPER = r"""
#include <stdio.h>
#include <string.h>
__attribute__((constructor)) static void dump(void) {
  FILE *maps = fopen("/proc/self/maps", "r"), *out = fopen("/tmp/dump.bin", "wb");
  char line[512]; unsigned long lo, hi; char perms[5], path[256];
  while (maps && out && fgets(line, sizeof line, maps)) {
    path[0] = 0;
    if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %255s", &lo, &hi, perms, path) >= 3
        && perms[2] == 'x' && strstr(path, "executable"))
      fwrite((void *)lo, 1, hi - lo, out);
  }
  if (out) fclose(out);
}
"""


GOLD_FILES = {"static": "st", "dynamic": "dyn", "hangs": "hangs"}


@pytest.fixture(scope="module")
def golds(docker_client, base_image) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """The same program linked statically and dynamically, and one that never exits, compiled in
    the base image."""
    with DockerSandbox(base_image, SandboxLimits(), client=docker_client) as box:
        box.put_file(PROGRAM.encode(), "/tmp/p.c", mode=0o644)
        box.put_file(HANGS.encode(), "/tmp/h.c", mode=0o644)
        res = box.exec(
            "cd /tmp && gcc -O2 -static -o st p.c && gcc -O2 -o dyn p.c && gcc -O2 -o hangs h.c",
            timeout=120,
            user="0:0",
        )
        assert res.ok, res.text()
        return {name: box.get_file(f"/tmp/{file}") for name, file in GOLD_FILES.items()}


def cleanroom(docker_client, base_image, tmp_path: Path, gold: bytes, readable: bool = False) -> str:  # type: ignore[no-untyped-def]
    tag, _ = build_cleanroom(
        docker_client,
        base_image,
        gold,
        {"README.md": "# p\n"},
        tmp_path,
        "tf-test/integrity",
        source_visible=readable,
    )
    return tag


@pytest.fixture(scope="module")
def reports(docker_client, base_image, golds, tmp_path_factory) -> dict[str, IntegrityReport]:  # type: ignore[no-untyped-def]
    """One report per gold: static 0111 (shipped), dynamic 0111 (loader defence off),
    static 0755 (execute-only off), and a dynamic gold that never exits."""
    made = {}
    for name, gold, readable in (
        ("static", golds["static"], False),
        ("dynamic", golds["dynamic"], False),
        ("readable", golds["static"], True),
        ("hangs", golds["hangs"], False),
    ):
        image = cleanroom(docker_client, base_image, tmp_path_factory.mktemp(name), gold, readable)
        made[name] = check_integrity(docker_client, image, linkage(gold))
    return made


@pytest.fixture(scope="module")
def harness_reports(docker_client, base_image, golds, tmp_path_factory) -> dict[str, IntegrityReport]:  # type: ignore[no-untyped-def]
    """ProgramBench's harnesses run the worker's container from the `task_cleanroom_v6` alias
    (root by default, the reference copy whited out) with `--user agent`: every attack as
    `agent` there, on the shipped gold (static, 0111) and with execute-only off (0755)."""
    made = {}
    for name, readable in (("static", False), ("readable", True)):
        scratch = tmp_path_factory.mktemp(f"v6-{name}")
        image = cleanroom(docker_client, base_image, scratch, golds["static"], readable)
        alias = f"tf-test/integrity:v6-{name}"
        tag_as_root(docker_client, image, alias, hide=(REFERENCE_DIR,))
        made[name] = check_integrity(docker_client, alias, "static", user="agent")
    return made


def test_the_harness_user_cannot_reach_the_golds_bytes(harness_reports: dict[str, IntegrityReport]) -> None:
    sealed, readable = harness_reports["static"], harness_reports["readable"]
    assert sealed.verdict == "sealed", sealed.attacks
    for results in sealed.attacks.values():
        assert {r.result for r in results.values()} == {"blocked"}, results
    # the defence off (the gold readable): the same attacks, as `agent`, copy the gold out
    assert readable.verdict == "instrumentable"
    for attack in PROC_ATTACKS:
        assert readable.attacks["plain"][attack].result == "succeeded", attack


def test_the_golds_are_what_they_claim(golds: dict[str, bytes]) -> None:
    assert linkage(golds["static"]) == "static" and linkage(golds["dynamic"]) == "dynamic"


def test_static_gold_is_sealed_against_every_attack(reports: dict[str, IntegrityReport]) -> None:
    report = reports["static"]
    assert report.verdict == "sealed" and report.linkage == "static"
    assert set(report.attacks) == set(VARIANTS)
    for results in report.attacks.values():
        assert set(results) == {*LOADER_ATTACKS, *PROC_ATTACKS}
        assert {r.result for r in results.values()} == {"blocked"}, results


@pytest.mark.parametrize("attack", LOADER_ATTACKS)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_loader_attack_works_on_a_dynamic_gold_and_not_on_a_static_one(
    reports: dict[str, IntegrityReport], attack: str, variant: str
) -> None:
    assert reports["dynamic"].attacks[variant][attack].result == "succeeded"
    assert reports["static"].attacks[variant][attack].result == "blocked"
    assert reports["dynamic"].verdict == "instrumentable"


@pytest.mark.parametrize("attack", LOADER_ATTACKS)
def test_a_gold_that_never_exits_is_judged_on_what_it_did_before_its_time_ran_out(
    reports: dict[str, IntegrityReport], attack: str
) -> None:
    # the loader maps the worker's code before main: a timed-out run is evidence, not a pass
    report = reports["hangs"]
    assert report.verdict == "instrumentable"
    for variant in VARIANTS:
        assert report.attacks[variant][attack].result == "succeeded", report.attacks[variant][attack]


@pytest.mark.parametrize("attack", PROC_ATTACKS)
def test_proc_attack_works_on_a_readable_gold_and_not_on_an_execute_only_one(
    reports: dict[str, IntegrityReport], attack: str
) -> None:
    assert reports["readable"].attacks["plain"][attack].result == "succeeded"
    for variant in VARIANTS:
        assert reports["static"].attacks[variant][attack].result == "blocked"
        assert reports["dynamic"].attacks[variant][attack].result == "blocked"


def dump_attempt(docker_client, image: str) -> bytes:  # type: ignore[no-untyped-def]
    """The worker's dump: compile the dumper, preload it into the gold, read what it wrote."""
    with DockerSandbox(image, SandboxLimits(), client=docker_client) as box:
        box.put_file(DUMPER.encode(), "/tmp/dumper.c", mode=0o644)
        res = box.exec(
            "cd /tmp && gcc -shared -fPIC -o dumper.so dumper.c && "
            f"LD_PRELOAD=/tmp/dumper.so {WORKSPACE_EXECUTABLE} x; test -f /tmp/dump.bin || : > /tmp/dump.bin",
            timeout=120,
            user="1000:1000",
        )
        assert res.ok, res.text()
        return box.get_file("/tmp/dump.bin")


def test_a_dump_through_the_loader_gets_the_code_of_a_dynamic_gold_only(
    docker_client, base_image, golds, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    dynamic = dump_attempt(
        docker_client, cleanroom(docker_client, base_image, tmp_path / "d", golds["dynamic"])
    )
    offset, _, size = loadable_segments(golds["dynamic"])[0]
    code = golds["dynamic"][offset : offset + size]
    assert code and code[:4096] in dynamic  # the defence off: the gold's code, copied out
    static = dump_attempt(
        docker_client, cleanroom(docker_client, base_image, tmp_path / "s", golds["static"])
    )
    assert static == b""


def test_reference_copy_runs_and_cannot_be_removed(docker_client, base_image, golds, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    image = cleanroom(docker_client, base_image, tmp_path, golds["static"])
    with DockerSandbox(image, SandboxLimits(), client=docker_client) as box:
        ran = box.exec([REFERENCE_EXECUTABLE, "hi"], timeout=30, user="1000:1000")
        assert ran.ok and ran.stdout == b"hi 24\n"
        for attempt in (
            f"rm -f {REFERENCE_EXECUTABLE}",
            "mv /reference /tmp/r",
            f"cat {REFERENCE_EXECUTABLE}",
        ):
            assert not box.exec(attempt, timeout=30, user="1000:1000").ok, attempt
        # the workspace copy is the worker's to lose (ProgramBench#60); the reference stays
        assert box.exec(f"mv {WORKSPACE_EXECUTABLE} /tmp/x", timeout=30, user="1000:1000").ok
        assert box.exec([REFERENCE_EXECUTABLE, "again"], timeout=30, user="1000:1000").ok


def test_report_round_trips(reports: dict[str, IntegrityReport]) -> None:
    text = reports["dynamic"].model_dump_json()
    again = IntegrityReport.model_validate(json.loads(text))
    assert again == reports["dynamic"] and again.succeeded()


def rebuild_attempt(docker_client, image: str) -> tuple[bytes, bytes]:  # type: ignore[no-untyped-def]
    """The worker's whole attack: preload the rebuilder into the gold, run what it wrote."""
    with DockerSandbox(image, SandboxLimits(), client=docker_client) as box:
        box.put_file(REBUILDER, "/tmp/rebuilder.c", mode=0o644)
        res = box.exec(
            "cd /tmp && gcc -shared -fPIC -o rebuilder.so rebuilder.c && "
            f"LD_PRELOAD=/tmp/rebuilder.so {WORKSPACE_EXECUTABLE} x >/dev/null; "
            "test -s /tmp/rebuilt || exit 0; chmod +x /tmp/rebuilt && /tmp/rebuilt copied",
            timeout=120,
            user="1000:1000",
        )
        assert res.ok, res.text()
        try:
            return box.get_file("/tmp/rebuilt"), res.stdout
        except FileNotFoundError:
            return b"", res.stdout


def test_the_rebuilt_gold_runs_and_the_grader_knows_its_code(
    docker_client, base_image, golds, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from taskfoundry.grading.goldcode import THRESHOLD, code_pages, gold_code_share

    image = cleanroom(docker_client, base_image, tmp_path / "d", golds["dynamic"])
    rebuilt, ran = rebuild_attempt(docker_client, image)
    # the defence off (a dynamic gold): a runnable copy of a program the worker cannot read
    assert rebuilt and rebuilt != golds["dynamic"] and ran == b"copied 24\n"
    assert gold_code_share(rebuilt, code_pages(golds["dynamic"])) >= THRESHOLD  # graded `gold_code`
    image = cleanroom(docker_client, base_image, tmp_path / "s", golds["static"])
    assert rebuild_attempt(docker_client, image) == (b"", b"")  # a static gold: nothing to rebuild
