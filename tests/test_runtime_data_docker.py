"""Runtime data: a C program that reads a data file its install puts under share/.

Its gold must find the file in the build image (probes) and in the cleanroom (the worker,
the filter, the evaluator), and the scan must stay clean while the same file is in the
source tree; code that the install puts under share/ is not shipped.
"""

from __future__ import annotations

from typing import Any

import pytest

from taskfoundry import sections
from taskfoundry.config import Config
from taskfoundry.kinds.program.cleanroom.image import WORKSPACE
from taskfoundry.kinds.program.cleanroom.stage import cleanroom_stage
from taskfoundry.kinds.program.results import CleanroomStage
from taskfoundry.kinds.program.testgen.explorer import installed_data_names
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.results import BuildStage
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import DockerSandbox

from conftest import make_repo

pytestmark = pytest.mark.docker

DATA_DIR = "/usr/local/share/banner"
PROGRAM = r"""#include <stdio.h>
#ifndef DATADIR
#define DATADIR "/usr/local/share/banner"
#endif
/* banner: print the greeting of the named style (default: plain) from DATADIR. */
int main(int argc, char **argv) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.bnr", DATADIR, argc > 1 ? argv[1] : "plain");
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "banner: no style file %s\n", path); return 1; }
    int c;
    while ((c = fgetc(f)) != EOF) putchar(c);
    fclose(f);
    return 0;
}
"""
MAKEFILE = (
    "all: banner\n\nbanner: banner.c\n\t$(CC) $(CFLAGS) -o banner banner.c\n\n"
    f"install: all\n\tmkdir -p $(DESTDIR){DATA_DIR} $(DESTDIR)/usr/local/share/bash-completion\n"
    f"\tcp styles/*.bnr $(DESTDIR){DATA_DIR}\n"
    "\tcp complete.sh $(DESTDIR)/usr/local/share/bash-completion/banner\n"
)
FILES = {
    "banner.c": PROGRAM,
    "Makefile": MAKEFILE,
    "README.md": "# banner\n\nUsage: `banner [STYLE]` prints the greeting of STYLE.\n",
    "styles/plain.bnr": "+-------+\n| hello |\n+-------+\n" * 3,
    "complete.sh": "#!/bin/sh\ncomplete -W 'plain' banner\n",
}


@pytest.fixture(scope="module")
def task(
    docker_client: Any, base_image: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[BuildStage, CleanroomStage]:
    tmp = tmp_path_factory.mktemp("banner")
    repo = make_repo(tmp / "banner", FILES)
    config = Config(out=tmp / "out", namespace="taskfoundry-test")
    src = source_stage(str(repo), config.sources, config.work_dir)
    build = build_stage(src, sections.for_build(config), docker_client)
    return build, cleanroom_stage(src, build, sections.for_cleanroom(config), docker_client)


def test_gold_finds_its_data_in_the_cleanroom_and_the_scan_is_clean(
    docker_client: Any, task: tuple[BuildStage, CleanroomStage]
) -> None:
    build, clean = task
    assert build.recipe.kind == "make"
    assert clean.leak.verdict == "clean", clean.leak.findings
    with DockerSandbox(clean.image, client=docker_client) as box:
        run = box.exec(["./executable"], timeout=60, workdir=WORKSPACE)  # as the worker
        assert run.exit_code == 0 and run.stdout.decode() == FILES["styles/plain.bnr"]
        # code the install put under share/ stays out of the cleanroom
        assert not box.exec(["test", "-e", "/usr/local/share/bash-completion/banner"], timeout=60).ok
    with DockerSandbox(build.image, client=docker_client) as box:
        assert box.exec(["/task/gold/executable"], timeout=60).ok  # the probes see the data too
        assert "plain" in installed_data_names(box)  # the explorer offers it as a value


def test_planted_source_under_share_is_still_found(
    docker_client: Any, task: tuple[BuildStage, CleanroomStage]
) -> None:
    from taskfoundry.kinds.program.cleanroom.leakscan import scan

    build, clean = task
    with DockerSandbox(clean.image, client=docker_client) as box:
        box.put_file(PROGRAM.encode(), f"{DATA_DIR}/notes.bnr", mode=0o644)
        report = scan(box, clean.image, build.gold_sha256, source=None)
    assert any(f.path == f"{DATA_DIR}/notes.bnr" for f in report.findings), report.findings
