"""Scripts and files run in containers, grouped by who runs them: `grading/` (every suite's
runner), `program/`, `function/`, `feature/` (each kind's own). They are shipped into
containers as bytes (`asset`), never imported by the pipeline's code, except where a host
module shares a constant with the script it ships."""

from __future__ import annotations

from importlib import resources


def asset(path: str) -> bytes:
    """The bytes of the asset at `path`, "<group>/<name>" (e.g. "grading/tfrun.py")."""
    group, _, name = path.partition("/")
    return resources.files(f"taskfoundry.assets.{group}").joinpath(name).read_bytes()
