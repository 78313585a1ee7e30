"""Build every example twice (cold: its images removed first; warm: right after) and print a
table of stage wall times and test counts.

    .venv/bin/python benchmarks/e2e_examples.py [--out DIR] [EXAMPLE ...]

`--stages` runs only the build and cleanroom stages (their functions, no Prefect), cold,
and prints their times and the ratio cleanroom / build; a SOURCE that is not an example
name is resolved as the CLI does (`debian:figlet`, `crate:jsonxf`). With `--baseline-ref
REF` the cleanroom of each source is also timed with REF's code (a git worktree of REF,
run in a subprocess) right before this tree's, against the same build image: before and
after, on the same machine, in one run.

    .venv/bin/python benchmarks/e2e_examples.py --stages --baseline-ref main csvq debian:tree
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from docker.errors import APIError, ImageNotFound

from taskfoundry.config import Config
from taskfoundry.sandbox.docker import docker_client

ROOT = Path(__file__).resolve().parents[1]
STAGES = ["source", "build", "cleanroom", "generate", "lint", "filter"]
NAMESPACE = "tfbench-e2e"  # its own image names: removing them never touches another run's


def remove_images(name: str) -> None:
    client = docker_client()
    for image in client.images.list():
        if any(f"local_1776_{name}" in tag for tag in image.tags):
            try:
                client.images.remove(image.id, force=True)
            except APIError as exc:  # in use by a running container: that run is not cold
                print(f"note: could not remove {image.tags}: {exc}")


def run_once(example: str, out: Path) -> dict[str, object]:
    from prefect.testing.utilities import prefect_test_harness  # noqa: F401  (imported by main)

    from taskfoundry.flows.build import build_flow

    start = time.monotonic()
    (task_dir,) = build_flow(str(ROOT / "examples" / example), Config(out=out))
    total = time.monotonic() - start
    task = yaml.safe_load((task_dir / "task.yaml").read_text())
    stats = task["stats"]
    return {"total": total, **stats}


def full_flow(examples: list[str], out: Path, json_out: Path | None = None) -> None:
    from prefect.testing.utilities import prefect_test_harness

    rows = []
    with prefect_test_harness(server_startup_timeout=120):
        for example in examples:
            remove_images(example)
            shutil.rmtree(out, ignore_errors=True)
            cold = run_once(example, out)
            warm = run_once(example, out)
            rows.append((example, cold, warm))
    if json_out is not None:  # the figures to compare two trees by (times aside)
        json_out.write_text(
            json.dumps(
                {e: {k: v for k, v in c.items() if "seconds" not in k and k != "total"} for e, c, _ in rows},
                indent=1,
                sort_keys=True,
            )
        )
    tail = "total | generated | kept | dropped | line cov | mutation | dummy pass |"
    head = "| example | run | " + " | ".join(STAGES) + " | " + tail
    print(head)
    print("|" + "---|" * (len(STAGES) + 9))
    for example, cold, warm in rows:
        for label, r in (("cold", cold), ("warm", warm)):
            secs = r["stage_seconds"]
            cells = " | ".join(f"{secs.get(s, 0):.1f}" for s in STAGES)  # type: ignore[union-attr]
            print(
                f"| {example} | {label} | {cells} | {r['total']:.1f} | {r['tests_generated']} | "
                f"{r['tests_kept']} | {json.dumps(r['dropped'])} | {r['line_rate']:.1%} | "
                f"{_pct(r.get('mutation_score'))} | {r['dummy_pass_rate']:.1%} |"
            )


def _pct(value: object) -> str:
    return f"{value:.1%}" if isinstance(value, float) else "n/a"


# --- build and cleanroom only, before and after -----------------------------------------


def _source(name: str) -> str:
    return str(ROOT / "examples" / name) if (ROOT / "examples" / name).is_dir() else name


def _untag(repository: str) -> None:
    """Remove every tag of `repository` (this benchmark's namespace only): the next stage is cold."""
    client = docker_client()
    for image in client.images.list(name=repository):
        for tag in image.tags:
            if tag.startswith(repository + ":"):
                try:
                    client.images.remove(tag)
                except (APIError, ImageNotFound) as exc:
                    print(f"note: could not remove {tag}: {exc}", file=sys.stderr)


def uncached_client() -> Any:
    """A client whose image builds ignore the engine's layer cache, which would make a
    "cold" build replay an earlier build of the same context step by step."""
    client = docker_client()
    client.api.build = functools.partial(client.api.build, nocache=True)  # type: ignore[method-assign]
    return client


def stages(source: str, out: Path, *, cold_build: bool) -> dict[str, Any]:
    """Source, build (cold when asked) and a cold cleanroom with the stage functions of
    whatever `taskfoundry` this process imports."""
    import taskfoundry
    from taskfoundry import sections
    from taskfoundry.kinds.program.cleanroom.stage import cleanroom_stage
    from taskfoundry.pipeline.build import build_stage
    from taskfoundry.pipeline.source import source_stage

    config = Config(out=out, namespace=NAMESPACE)
    src = source_stage(_source(source), config.sources, config.work_dir)
    names = sections.for_build(config).names(src)
    client = uncached_client() if cold_build else docker_client()
    if cold_build:
        _untag(names.build_repo)
    start = time.monotonic()
    build = build_stage(src, sections.for_build(config), client)
    build_s = time.monotonic() - start
    client = uncached_client()  # the old cleanroom was a docker build too
    _untag(names.cleanroom_repo)
    start = time.monotonic()
    clean = cleanroom_stage(src, build, sections.for_cleanroom(config), client)
    return {
        "code": str(Path(taskfoundry.__file__).parents[1]),
        "build": build_s,
        "build_fresh": build.built,
        "cleanroom": time.monotonic() - start,
        "cleanroom_fresh": clean.built,
        "verdict": clean.leak.verdict,
        "findings": len(clean.leak.findings),
        "scan": clean.leak.seconds,
    }


def baseline_tree(ref: str) -> Path:
    where = Path(tempfile.mkdtemp(prefix="tf-baseline-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(where), ref], check=True)
    return where


def baseline_stages(tree: Path, source: str, out: Path) -> dict[str, Any]:
    """`stages` run by the baseline's code (PYTHONPATH first), against the build just made."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, __file__, "--one", source, "--out", str(out)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"baseline run of {source} failed:\n{res.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return result


def stage_table(rows: list[tuple[str, str, dict[str, Any]]]) -> str:
    lines = [
        "| source | code | build s | cleanroom s | cleanroom / build | leak scan s | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for source, label, r in rows:
        ratio = r["cleanroom"] / r["build"] if r["build"] else float("nan")
        lines.append(
            f"| {source} | {label} | {r['build']:.1f} | {r['cleanroom']:.1f} | {ratio:.2f} | "
            f"{r['scan']:.1f} | {r['verdict']} ({r['findings']}) |"
        )
    return "\n".join(lines)


def stages_only(sources: list[str], out: Path, baseline_ref: str | None) -> None:
    tree = baseline_tree(baseline_ref) if baseline_ref else None
    rows: list[tuple[str, str, dict[str, Any]]] = []
    try:
        for source in sources:
            try:
                rows += measure(source, out, tree, baseline_ref)
            except Exception as exc:  # one source that cannot be fetched or built is a row
                print(f"| {source} | failed: {str(exc).splitlines()[-1][:200]} | | | | | |", flush=True)
    finally:
        if tree is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    print()
    print(stage_table(rows))


def measure(
    source: str, out: Path, tree: Path | None, baseline_ref: str | None
) -> list[tuple[str, str, dict[str, Any]]]:
    """The rows of one source: before (with a baseline tree), then after."""
    rows: list[tuple[str, str, dict[str, Any]]] = []
    after = stages(source, out, cold_build=True)  # the cold build, timed once
    if tree is not None:
        before = baseline_stages(tree, source, out)
        before["build"] = after["build"]  # the same image: its warm rebuild is no build time
        rows.append((source, f"before ({baseline_ref})", before))
        print(stage_table(rows[-1:]).splitlines()[-1], flush=True)
        again = stages(source, out, cold_build=False)
        after = {**again, "build": after["build"]}
    rows.append((source, "after", after))
    print(stage_table(rows[-1:]).splitlines()[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("examples", nargs="*", default=["csvq", "rcalc", "logsum"])
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-e2e"))
    parser.add_argument("--stages", action="store_true", help="build and cleanroom stages only")
    parser.add_argument("--baseline-ref", default=None, help="with --stages: also time REF's cleanroom")
    parser.add_argument("--json", type=Path, default=None, help="also write each example's task stats here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # the baseline's subprocess
    args = parser.parse_args()
    if args.one:
        print(json.dumps(stages(args.one, args.out, cold_build=False)))
    elif args.stages:
        stages_only(args.examples, args.out, args.baseline_ref)
    else:
        full_flow(args.examples, args.out, args.json)


if __name__ == "__main__":
    main()
