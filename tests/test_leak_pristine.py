"""The cleanroom stage's scan of a pristine container reads the base's directories from a
listing recorded by an earlier scan of the same base: it must find exactly what the full
walk finds, leaks in the base and in the cleanroom's own layer alike.

The base here is the project's base plus a layer with planted leaks (a copy of a source
file, a readable copy of the gold); the cleanroom on top pastes a source function into its
README. Three scans of fresh containers: the full walk, the first pristine scan (records
the listing), the second (reads it); then a fourth with a file planted after start-up,
which the listing hides.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskfoundry.images.layer import load_layer_image
from taskfoundry.kinds.program.cleanroom.image import build_cleanroom, layer_roots
from taskfoundry.kinds.program.cleanroom.leakscan import LeakReport, Pristine, scan
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.sandbox.tarutil import tar_files

pytestmark = pytest.mark.docker

FUNCTION = textwrap.dedent("""\
    static long checksum_block(const unsigned char *data, size_t len, long seed)
    {
        long acc = seed;
        size_t i;
        for (i = 0; i < len; i++) {
            acc = (acc * 31 + data[i]) % 1000003;
            if (acc < 0) {
                acc = -acc;
            }
        }
        return acc ^ (long)len;
    }
    """)
SOURCE = "#include <stddef.h>\n\n" + FUNCTION + "\nint main(void) { return (int)checksum_block(0, 0, 7); }\n"
GOLD = b"\x7fELF a pretend executable, only its sha256 matters to the scan\n" * 8
README = "# sumtool\n\nPrints a checksum of its input.\n\n" + FUNCTION


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sumtool")
    (root / "src").mkdir()
    (root / "src" / "sumtool.c").write_text(SOURCE)
    (root / "README.md").write_text("# sumtool\n\nPrints a checksum of its input.\n")
    return root


@pytest.fixture(scope="module")
def image(docker_client, base_image, tmp_path_factory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    leaky_base, _ = load_layer_image(
        docker_client,
        base_image,
        tar_files({"srv/notes.txt": SOURCE.encode(), "var/tmp/.g": GOLD}),
        "taskfoundry-test/leak-pristine-base:1",
        config={},
        comment="planted leaks",
    )
    tag, _ = build_cleanroom(
        docker_client,
        leaky_base,
        GOLD,
        {"README.md": README},
        tmp_path_factory.mktemp("cleanroom"),
        "taskfoundry-test/leak-pristine",
    )
    yield tag
    docker_client.images.remove(tag)
    docker_client.images.remove(leaky_base)


def _scan(client, image: str, source: Path, pristine: Pristine | None, plant: bool = False) -> LeakReport:  # type: ignore[no-untyped-def]
    with DockerSandbox(image, client=client) as box:
        if plant:
            box.put_file(SOURCE.encode(), "/srv/extra.c")
        return scan(box, image, hashlib.sha256(GOLD).hexdigest(), source=source, pristine=pristine)


def _found(report: LeakReport) -> list[tuple[str, str]]:
    return [(f.path, f.kind) for f in report.findings]


def test_listing_scan_finds_what_the_full_walk_finds(
    docker_client, image: str, source: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    listing = tmp_path / "base.json"
    pristine = Pristine(layer_roots({}), listing)
    full = _scan(docker_client, image, source, None)
    first = _scan(docker_client, image, source, pristine)
    recorded = json.loads(listing.read_text())
    second = _scan(docker_client, image, source, pristine)
    assert {
        ("/srv/notes.txt", "source_copy"),
        ("/srv/notes.txt", "source_file"),
        ("/var/tmp/.g", "binary_copy"),
        ("/workspace/README.md", "verbatim_source"),
    } <= set(_found(full))
    for report in (first, second):
        assert _found(report) == _found(full)
        assert (report.files_scanned, report.texts_parsed) == (full.files_scanned, full.texts_parsed)
    # the base's directories are recorded, with the digests the content check computed;
    # nothing the cleanroom's layer touches (the root, /opt, the workspace) is
    assert "/srv" in recorded["dirs"] and "/usr/bin" in recorded["dirs"]
    assert recorded["files"]["/srv/notes.txt"][0] == hashlib.sha256(SOURCE.encode()).hexdigest()
    assert not {"/", "/opt", "/workspace"} & set(recorded["dirs"])
    assert not any(d.startswith("/workspace/") for d in recorded["dirs"])
    # the listing is really read: a file planted after start-up is not seen (the full walk
    # finds such a copy: test_leak_planted), which is why only a fresh container may use it
    planted = _scan(docker_client, image, source, pristine, plant=True)
    assert _found(planted) == _found(full)
