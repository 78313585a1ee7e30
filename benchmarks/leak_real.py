"""The leak scan on real programs: build each source's cleanroom and report its verdict.

    .venv/bin/python benchmarks/leak_real.py [SOURCE ...] [--only] [--out DIR]

Runs the stage functions directly (no Prefect): source, build, cleanroom (which ends with
the scan, with the source given). A finding on a real program is a false positive of the
scan or a real leak of the builder: either way it is a bug. Images are reused by tag, so
only the first run of a source pays for its build (debian:hello: about 4 minutes cold).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from taskfoundry import sections
from taskfoundry.config import Config
from taskfoundry.errors import TaskfoundryError
from taskfoundry.kinds.program.cleanroom.stage import cleanroom_stage
from taskfoundry.kinds.program.results import CleanroomStage
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import DockerSandbox, docker_client

DEFAULT = ["debian:hello", "debian:figlet", "crate:jsonxf", "pypi:cowsay"]
HEADER = (
    "| source | verdict | findings | files scanned | scan s | usage text | gold mode "
    "| assets kept/dropped |\n|---|---|---|---|---|---|---|---|"
)


def usage_present(clean: CleanroomStage) -> str:
    """Whether the image holds non-empty captured --help text (docs/usage/*.txt)."""
    with DockerSandbox(clean.image, client=docker_client()) as box:
        res = box.exec("cat /workspace/docs/usage/*.txt 2>/dev/null | wc -c", timeout=60)
        mode = box.exec(["stat", "-c", "%a", "/workspace/executable"], timeout=60)
    size = int(res.stdout.decode().strip() or 0)
    return f"{'yes' if size else 'no'} ({size} B) | {mode.stdout.decode().strip()}"


def measure(source: str, config: Config) -> str:
    client = docker_client()
    src = source_stage(source, config.sources, config.work_dir)
    build = build_stage(src, sections.for_build(config), client)
    clean = cleanroom_stage(src, build, sections.for_cleanroom(config), client)
    leak = clean.leak
    found = "; ".join(f"{f.kind} {f.path}" for f in leak.findings)
    findings = f"{len(leak.findings)}" + (f": {found}" if found else "")
    return (
        f"| {source} | {leak.verdict} | {findings} | {leak.files_scanned} | {leak.seconds:.1f} | "
        f"{usage_present(clean)} | {len(clean.assets.kept)}/{len(clean.assets.dropped)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sources", nargs="*", help="more sources, after the default ones")
    parser.add_argument("--only", action="store_true", help="scan only the sources given")
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-leak"))
    args = parser.parse_args()
    config = Config(out=args.out)
    print(HEADER)
    for source in ([] if args.only else DEFAULT) + args.sources:
        try:
            print(measure(source, config), flush=True)
        except TaskfoundryError as exc:
            print(f"| {source} | failed: {exc} | | | | | | |", flush=True)


if __name__ == "__main__":
    main()
