"""The base image's making: a suite that lacks its packages says so; a snapshot mirror's expired
Release is taken when configured."""

from __future__ import annotations

import re
import shutil
import urllib.request
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from taskfoundry.errors import ImageError
from taskfoundry.images.base import BaseImageConfig, apt_files, ensure_base_image
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker  # a base image is made only where an engine runs


def test_a_package_the_suite_lacks_is_named(docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`base: {suite: sid}` with the default packages failed as "debootstrap exited 1": sid has
    no rustc-web. The real debootstrap against Debian's archive, with a package no suite has."""
    if shutil.which("debootstrap") is None:
        pytest.fail("debootstrap is not installed: `make demo` installs it")
    config = BaseImageConfig(packages=["taskfoundry-no-such-package"], cache_dir=tmp_path)
    with pytest.raises(ImageError) as caught:
        ensure_base_image(config, docker_client)
    assert "taskfoundry-no-such-package" in str(caught.value)
    assert "base.packages" in str(caught.value)
    assert not list(tmp_path.glob("*.tar"))  # nothing half-made is left to be taken for a rootfs


def _sid_release_expired(mirror: str) -> bool:
    """Whether the mirror's sid Release is past its Valid-Until (a snapshot of the archive)."""
    with urllib.request.urlopen(f"{mirror}/dists/sid/Release", timeout=60) as answer:
        head = answer.read(4096).decode(errors="replace")
    found = re.search(r"^Valid-Until: (.+)$", head, re.M)
    return bool(found) and parsedate_to_datetime(found.group(1)) < datetime.now(UTC)


@pytest.mark.parametrize("snapshot", [True, False])
def test_a_snapshot_mirror_s_expired_release_is_taken(docker_client, base_image: str, snapshot: bool) -> None:  # type: ignore[no-untyped-def]
    """The archive reachable here is a snapshot: its sid Release was valid until 2026-11-06, and
    a sid base's toolchain layer stopped at "Release file ... is expired" (appstream-generator).
    `base.check_valid_until: false` puts apt's setting in the image; the base image's own apt
    files, written as the base writes them, against the real archive."""
    config = BaseImageConfig(suite="sid", check_valid_until=not snapshot)
    if not _sid_release_expired(config.mirror):
        pytest.skip(f"{config.mirror}'s sid Release is within its Valid-Until: nothing expired to take")
    with DockerSandbox(base_image, SandboxLimits(network=True), client=docker_client) as box:
        for path, text in apt_files(config).items():
            box.put_file(text.encode(), "/" + path)
        res = box.exec("apt-get update 2>&1", timeout=600, user="0:0")
    said = res.stdout.decode(errors="replace")
    if snapshot:
        assert res.exit_code == 0 and "is expired" not in said, said[-2000:]
    else:  # the defence off: apt refuses the expired Release, as the toolchain layer did
        assert res.exit_code != 0 and "is expired" in said, said[-2000:]
