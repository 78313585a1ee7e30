"""The function kind's image: the base image plus a venv (system site packages: pytest) holding
hypothesis, coverage.py and the allowed libraries the source's functions use. The generation
sandbox and the task's grading image are this one image; no project source is in it (the
runner and the reference module go into each container at run time). Wheels are fetched on
the host for the image's Python, so the image build needs no network."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import docker

from taskfoundry.builders.wheels import IMAGE_PYTHON
from taskfoundry.errors import BuildError
from taskfoundry.images.layer import inputs_image
from taskfoundry.images.run_layer import build_on_inputs

VENV = "/opt/tf-fn"
PYTHON = f"{VENV}/bin/python"
HYPOTHESIS_DIR = f"{VENV}/hypothesis"
TOOLS = ("pip", "hypothesis==6.170.15", "coverage==7.17.3")
_PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64", "any")


# hypothesis' caches (the character map, the utf-8 codec's intervals) made once in the image:
# each costs seconds to tens of seconds in every process that would otherwise make it
_WARM = """\
from hypothesis import given, settings, strategies as st
from hypothesis.internal.charmap import charmap, intervals_from_codec
charmap()
intervals_from_codec("utf-8")
given(st.text(), st.characters(), st.from_type(str))(\
settings(max_examples=5, database=None)(lambda a, b, c: None))()
"""


def env_run(libraries: list[str]) -> str:
    """The one RUN over the inputs image (wheels in /opt/tf-fn-wheels, the ENV)."""
    wants = " ".join(["hypothesis", "coverage", *libraries])
    return (
        f"python3 -m venv --system-site-packages {VENV} \\\n"
        f" && {PYTHON} /opt/tf-fn-wheels/$(cd /opt/tf-fn-wheels && ls pip-*.whl)/pip install --no-index"
        f" --no-cache-dir --disable-pip-version-check --find-links /opt/tf-fn-wheels {wants} \\\n"
        f" && {PYTHON} /opt/tf-fn-wheels/warm.py \\\n"
        " && rm -rf /opt/tf-fn-wheels && mkdir -p /work && chmod 1777 /work"
        f" && chmod -R a+rX {HYPOTHESIS_DIR}"
    )


def download(requirements: list[str], cache: Path) -> Path:
    """Wheels for the image's Python, cached by the requirement list."""
    key = hashlib.sha256("\0".join(requirements).encode()).hexdigest()[:16]
    dest = cache / f"fn-wheels-{key}"
    if dest.is_dir():
        return dest
    part = dest.with_suffix(".part")
    shutil.rmtree(part, ignore_errors=True)
    platforms = [arg for p in _PLATFORMS for arg in ("--platform", p)]
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--disable-pip-version-check",
        "--dest",
        str(part),
    ]
    cmd += ["--only-binary=:all:", "--python-version", IMAGE_PYTHON, *platforms, *requirements]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"pip download {' '.join(requirements)} failed: {proc.stderr.strip()[-1500:]}")
    part.rename(dest)
    return dest


def ensure_env_image(
    client: docker.DockerClient, base: str, libraries: list[str], namespace: str, work: Path
) -> tuple[str, bool]:
    """(tag, built): content-addressed by the Dockerfile and the wheels."""
    wheels = download([*TOOLS, *sorted(libraries)], work / "cache")
    key = hashlib.sha256(f"{base} {sorted(libraries)}".encode()).hexdigest()[:12]
    context = work / "builds" / "function-env" / key
    shutil.rmtree(context, ignore_errors=True)
    shutil.copytree(wheels, context / "wheels")
    (context / "wheels" / "warm.py").write_text(_WARM)
    repository = f"{namespace}/function-env"
    env = {"HYPOTHESIS_STORAGE_DIRECTORY": HYPOTHESIS_DIR}
    inputs = inputs_image(client, base, {"/opt/tf-fn-wheels": context / "wheels"}, env, repository)
    run = env_run(sorted(libraries))
    return build_on_inputs(
        client, inputs, run, context.parent / f"{key}-image", repository, context.parent / f"{key}.log"
    )
