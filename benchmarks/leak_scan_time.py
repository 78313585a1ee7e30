"""Leak scan time and findings on every cleanroom image the local engine holds.

    python benchmarks/leak_scan_time.py                 # every cleanroom image, once each
    python benchmarks/leak_scan_time.py --repeat 3      # min / median / max of 3 scans
    python benchmarks/leak_scan_time.py IMAGE...        # just these images

An image built from examples/<name> is scanned against that source (copy and verbatim
checks on); any other image without a source. Each scan runs in a fresh container, as
the cleanroom stage does; container start and removal are timed apart from the scan.
The load average is printed: on a busy engine the file-system walk dominates and slows.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import sys
import time
from pathlib import Path

import docker

from taskfoundry.kinds.program.cleanroom.leakscan import LeakReport, scan
from taskfoundry.sandbox.docker import DockerSandbox, docker_client

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_TAG = re.compile(r"_1776_(?P<name>[\w-]+?)(?:\.[0-9a-f]{7})?:(?P<tag>\S+)$")


def cleanroom_images(client: docker.DockerClient) -> list[str]:
    """One tag per cleanroom image (the task_cleanroom alias when there is one)."""
    chosen: dict[str, str] = {}
    for image in client.images.list():
        tags = [
            t for t in image.tags if _TAG.search(t) and (t.endswith(":task_cleanroom") or "/cleanroom-" in t)
        ]
        if tags:
            chosen[image.id] = sorted(tags, key=lambda t: not t.endswith(":task_cleanroom"))[0]
    return sorted(chosen.values())


def source_of(image: str) -> Path | None:
    match = _TAG.search(image)
    path = EXAMPLES / match["name"] if match else None
    return path if path is not None and path.is_dir() else None


def scan_once(client: docker.DockerClient, image: str, source: Path | None) -> tuple[LeakReport, float]:
    start = time.perf_counter()
    with DockerSandbox(image, client=client) as box:
        gold = hashlib.sha256(box.get_file("/workspace/executable")).hexdigest()
        report = scan(box, image, gold, source=source)
    return report, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("images", nargs="*", help="images to scan [every cleanroom image]")
    parser.add_argument("--repeat", type=int, default=1, help="scans per image")
    args = parser.parse_args(argv)
    client = docker_client()
    images = args.images or cleanroom_images(client)
    if not images:
        sys.stderr.write("no cleanroom images: run `taskfoundry build examples/csvq` first\n")
        return 1
    sys.stdout.write(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}\n")
    sys.stdout.write(
        f"{'image':<58} {'source':<15} {'scan s (min/med/max)':<22} {'total s':>7} "
        f"{'files':>6} {'texts':>5} {'findings':>8}\n"
    )
    leaky = 0
    for image in images:
        source = source_of(image)
        runs = [scan_once(client, image, source) for _ in range(args.repeat)]
        secs = sorted(r.seconds for r, _ in runs)
        report = runs[-1][0]
        leaky += report.verdict == "leaky"
        timing = f"{secs[0]:.1f}/{statistics.median(secs):.1f}/{secs[-1]:.1f}"
        label = f"examples/{source.name}" if source else "-"
        sys.stdout.write(
            f"{image:<58} {label:<15} {timing:<22} {runs[-1][1]:>7.1f} "
            f"{report.files_scanned:>6} {report.texts_parsed:>5} "
            f"{len(report.findings):>8}\n"
        )
        for finding in report.findings:
            sys.stdout.write(f"    {finding.kind} {finding.path} ({finding.evidence})\n")
    sys.stdout.write(f"load average after {os.getloadavg()[0]:.1f}; leaky images: {leaky}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
