"""A base image whose packages the suite lacks: debootstrap's reason reaches the message."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskfoundry.errors import ImageError
from taskfoundry.images.base import BaseImageConfig, ensure_base_image

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
