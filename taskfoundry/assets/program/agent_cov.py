"""taskfoundry agent generator: coverage directories for pytest runs (plugin), their reader (script).

Copied into the sandbox as /tmp/tf_agent_cov.py beside the probe runner (tf_probe_runner.py).
As a pytest plugin (`-p tf_agent_cov`, /tmp on PYTHONPATH) it points the coverage variables
of the runner's `coverage_env()` at $TF_COV_DIR (whole suite) or at one directory per test
under $TF_COV_BASE, and names them in $TF_PASSENV so tfrun passes them on. As a script it
reads the per-test directories with the runner's readers. Stdlib and pytest only.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator

import pytest
import tf_probe_runner  # the probe runner, installed beside this file


def _point(covdir: str) -> None:
    env: dict[str, str] = tf_probe_runner.coverage_env(os.environ["TF_COV_KIND"], covdir)
    os.environ.update(env)
    os.environ["TF_PASSENV"] = ":".join(env)


if os.environ.get("TF_COV_DIR"):
    _point(os.environ["TF_COV_DIR"])


@pytest.fixture(autouse=True)
def _tf_coverage_dir(request: pytest.FixtureRequest) -> Iterator[None]:
    base = os.environ.get("TF_COV_BASE")
    if not base:
        yield
        return
    covdir = os.path.join(base, uuid.uuid4().hex)
    os.makedirs(covdir)
    with open(covdir + ".nodeid", "w") as handle:
        handle.write(request.node.nodeid)
    saved = dict(os.environ)
    _point(covdir)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main() -> None:
    """Per-test coverage: {nodeid: {"covered": {file: [lines]}, "total": {...}}} on stdout."""
    job = json.load(sys.stdin)
    reader = tf_probe_runner.READERS[job["coverage"]]
    found: dict[str, dict[str, dict[str, list[int]]]] = {}
    for name in sorted(os.listdir(job["base"])):
        if not name.endswith(".nodeid"):
            continue
        with open(os.path.join(job["base"], name)) as handle:
            nodeid = handle.read()
        covered, total = reader(job, os.path.join(job["base"], name[: -len(".nodeid")]))
        found[nodeid] = {
            "covered": {k: sorted(v) for k, v in covered.items()},
            "total": {k: sorted(v) for k, v in total.items()},
        }
    json.dump(found, sys.stdout)


if __name__ == "__main__":
    main()
