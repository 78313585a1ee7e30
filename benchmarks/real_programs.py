"""Build real upstream programs from the registries and print a table (markdown).

For each SOURCE: resolve it, detect its recipe, remove its build image (cold), build
(gold + coverage), build again (warm: the tag exists, nothing is rebuilt), then run
the coverage build once with `--help` and report the program's own line coverage.
The base image and toolchain images are kept between runs. A failure is a row with
its reason.

    .venv/bin/python benchmarks/real_programs.py [--work DIR] [--json FILE] [SOURCE ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from taskfoundry.builders.build import COV_ROOT, COVERAGE, GOLD, GOLD_DONE, BuildResult, run_build
from taskfoundry.builders.resolve import resolve_recipe
from taskfoundry.errors import TaskfoundryError
from taskfoundry.images.base import BaseImageConfig, ensure_base_image
from taskfoundry.kinds.program.testgen.probes import Probe, RunnerJob, install_runner, run_probes
from taskfoundry.naming import TaskNames, work_dir
from taskfoundry.sandbox.docker import DockerSandbox, docker_client
from taskfoundry.sources import Checkout, resolve_source

PROGRAMS = [
    "debian:hello",  # C, autotools (GNU)
    "debian:figlet",  # C, plain make
    "debian:dos2unix",  # C, plain make running msgfmt (tree 2.2.1's tarball 404s in the pool)
    "debian:cmark",  # C, cmake
    "debian:lowdown",  # C, hand-written configure + BSD make (serd 0.32.4's tarball 404s)
    "debian:fribidi",  # C, meson
    "debian:lzip",  # C++, hand-written configure + make
    "debian:ninja-build",  # C++, cmake (program `ninja`)
    "debian:goawk",  # Go, no external modules
    "crate:hexyl",  # Rust, clap & co. vendored
    "crate:jsonxf",  # Rust, two dependencies
    "pypi:cowsay",  # Python, no dependencies
    "pypi:tabulate",  # Python
    "pypi:sqlparse",  # Python (program `sqlformat`)
]
NAMESPACE = "tfbench"


@dataclass
class Row:
    source: str
    version: str = ""
    kind: str = ""
    language: str = ""
    gold: str = "-"
    coverage: str = "-"
    cold_s: float | None = None
    warm_s: float | None = None
    size_mb: float | None = None
    added_mb: float | None = None
    help_exit: int | None = None
    help_cov: str = ""
    reason: str = ""


def remove_build_images(client: Any, names: TaskNames) -> None:
    prefix = f"{names.build_repo}:"
    for image in client.images.list():
        if any(tag.startswith(prefix) for tag in image.tags):
            client.images.remove(image.id, force=True)


def help_coverage(client: Any, res: BuildResult, co: Checkout) -> tuple[int, str]:
    gomod = co.path / "go.mod"
    match = re.search(r"^module\s+(\S+)", gomod.read_text(), re.M) if gomod.exists() else None
    job = RunnerJob(
        executable=COVERAGE,
        coverage=res.recipe.coverage,
        cov_root=COV_ROOT,
        go_module=match.group(1) if match else "",
        timeout=30,
    )
    with DockerSandbox(res.image, client=client) as box:
        install_runner(box)
        out = run_probes(box, job, [Probe(("--help",))])[0]
    covered = sum(len(v) for v in out.covered.values())
    total = sum(len(v) for v in out.total.values())
    share = f"{100 * covered / total:.1f}% ({covered}/{total})" if total else "no data"
    return out.exit_code, share


def run_gold(client: Any, image: str) -> str:
    with DockerSandbox(image, client=client) as box:
        res = box.exec([GOLD, "--help"], timeout=30)
    return "ok" if not res.timed_out else "hangs"


def bench(source: str, out: Path, client: Any, base: str) -> Row:
    row = Row(source)
    try:
        co = resolve_source(source, work_dir(out))
        names = TaskNames.of(co, NAMESPACE, out)
        row.version = co.upstream.version if co.upstream else co.commit[:7]
        recipe = resolve_recipe(co, None, base, client, names)
        row.kind, row.language = recipe.kind, recipe.language
        remove_build_images(client, names)
        start = time.monotonic()
        res = run_build(co, recipe, base, names, client)
        row.cold_s = time.monotonic() - start
    except TaskfoundryError as exc:
        return _failed(row, exc)
    start = time.monotonic()
    run_build(co, recipe, base, names, client)
    row.warm_s = time.monotonic() - start
    row.gold, row.coverage = run_gold(client, res.image), "ok"
    image = client.images.get(res.image)
    row.size_mb = image.attrs["Size"] / 1e6
    row.added_mb = (image.attrs["Size"] - client.images.get(base).attrs["Size"]) / 1e6
    row.help_exit, row.help_cov = help_coverage(client, res, co)
    return row


def _failed(row: Row, exc: TaskfoundryError) -> Row:
    log = getattr(exc, "log", None)
    text = log.read_text(errors="replace") if log and log.exists() and log.suffix == ".log" else ""
    if row.kind:
        row.gold = "ok" if any(ln.strip() == GOLD_DONE for ln in text.splitlines()) else "FAIL"
        row.coverage = "FAIL" if row.gold == "ok" else "-"
    tail = [ln.strip() for ln in text.splitlines() if ln.strip() and "The command '/bin/sh" not in ln]
    message = getattr(exc, "message", str(exc))
    row.reason = (f"build failed: {' / '.join(tail[-2:])}" if tail else message)[:300]
    return row


def table(rows: list[Row]) -> str:
    head = (
        "| source | version | kind | lang | gold | cov | cold s | warm s | image MB (+base) "
        "| --help exit | --help line cov | reason |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        size = f"{r.added_mb:.0f} (+{r.size_mb - r.added_mb:.0f})" if r.size_mb and r.added_mb else ""
        cells = [
            r.source,
            r.version,
            r.kind,
            r.language,
            r.gold,
            r.coverage,
            _n(r.cold_s),
            _n(r.warm_s),
            size,
            "" if r.help_exit is None else str(r.help_exit),
            r.help_cov,
            r.reason.replace("|", "/"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _n(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("sources", nargs="*", default=PROGRAMS)
    parser.add_argument("--work", type=Path, default=Path("/tmp/tf-bench-real"))
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    client = docker_client()
    base = ensure_base_image(BaseImageConfig(), client)
    rows = []
    for source in args.sources:
        rows.append(bench(source, args.work, client, base))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
