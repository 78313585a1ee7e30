"""`taskfoundry audit IMAGE`: run the leak scan on any cleanroom image and print the findings."""

from __future__ import annotations

import hashlib
import logging
import sys
from pathlib import Path

import click

from taskfoundry.errors import LeakError, TaskfoundryError
from taskfoundry.grading.gold import read_gold
from taskfoundry.kinds.program.cleanroom.assets import AssetReport
from taskfoundry.kinds.program.cleanroom.elf import linkage
from taskfoundry.kinds.program.cleanroom.integrity import check_integrity
from taskfoundry.kinds.program.cleanroom.leakscan import LeakReport, LeakScanConfig, scan
from taskfoundry.kinds.program.cleanroom.reports import IntegrityReport
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.models import load_json_model
from taskfoundry.sandbox.base import Sandbox, SandboxLimits

log = logging.getLogger(__name__)


def audit_image(
    image: str,
    source: Path | None = None,
    gold_sha256: str | None = None,
    config: LeakScanConfig | None = None,
    *,
    source_visible: bool = False,
    assets: AssetReport | None = None,
) -> LeakReport:
    """Start a container of `image` (no network) and scan it. Without `gold_sha256`, the
    gold is whatever the image holds at the workspace's executable. `assets`: the task's
    kept test assets (reports/assets.json), allowed as copies of source files."""
    from taskfoundry.sandbox.docker import DockerSandbox, docker_client

    cfg = config or LeakScanConfig()
    allowed = assets.allowed(cfg.workspace) if assets else None
    with DockerSandbox(image, SandboxLimits(), client=docker_client()) as box:
        gold = gold_sha256 or _image_gold(box, cfg.workspace)
        return scan(
            box, image, gold, source=source, config=cfg, gold_readable=source_visible, allowed=allowed
        )


def _image_gold(box: Sandbox, workspace: str) -> str:
    try:
        return hashlib.sha256(box.get_file(f"{workspace}/executable")).hexdigest()
    except FileNotFoundError:
        log.warning("%s/executable is missing: no gold to look for", workspace)
        return ""


def format_report(report: LeakReport) -> str:
    lines = [f"{f.kind:<16} {f.path}  ({f.evidence})" for f in report.findings]
    lines += [f"note: {note}" for note in report.notes]
    checked = "with the source" if report.source_checked else "without the source"
    lines.append(
        f"{report.image}: {report.verdict}, {len(report.findings)} findings "
        f"({report.files_scanned} files, {report.texts_parsed} texts parsed, {checked}, "
        f"{report.seconds:.1f}s)"
    )
    return "\n".join(lines)


@click.command("audit")
@click.argument("image")
@click.option(
    "--source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="the original source tree (enables copy and verbatim checks)",
)
@click.option("--gold-sha256", default=None, help="sha256 of the gold [the image's executable]")
@click.option(
    "--tokens",
    type=int,
    default=40,
    show_default=True,
    help="shortest verbatim run of source tokens reported",
)
@click.option("--source-visible", is_flag=True, help="the gold is a script: expect mode 0755")
@click.option(
    "--assets",
    "assets_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="reports/assets.json of the task: its test assets are allowed",
)
@click.option("--json", "as_json", is_flag=True, help="print the LeakReport as JSON")
@click.option(
    "--integrity/--no-integrity",
    default=True,
    show_default=True,
    help="also try the worker's attacks on the gold (reports/integrity.json)",
)
def audit_command(
    image: str,
    source: Path | None,
    gold_sha256: str | None,
    tokens: int,
    source_visible: bool,
    assets_file: Path | None,
    as_json: bool,
    integrity: bool,
) -> None:
    """Scan a cleanroom IMAGE for leaks; exit 1 when it is leaky."""
    try:
        assets = load_json_model(assets_file, AssetReport) if assets_file else None
        report = audit_image(
            image,
            source,
            gold_sha256,
            LeakScanConfig(shingle_tokens=tokens),
            source_visible=source_visible,
            assets=assets,
        )
    except TaskfoundryError as exc:
        click.echo(f"taskfoundry: {exc}", err=True)
        sys.exit(2)
    click.echo(report.model_dump_json(indent=2) if as_json else format_report(report))
    if integrity:
        try:
            sealed = audit_integrity(image, source_visible)
        except TaskfoundryError as exc:
            click.echo(f"taskfoundry: {exc}", err=True)
            sys.exit(2)
        click.echo(sealed.model_dump_json(indent=2) if as_json else format_integrity(sealed))
    sys.exit(1 if report.verdict == "leaky" else 0)


def audit_integrity(image: str, source_visible: bool) -> IntegrityReport:
    """The worker's attacks on the image's gold (cleanroom.integrity)."""
    from taskfoundry.sandbox.docker import docker_client

    client = docker_client()
    gold = read_gold(client, image)  # the grader's reading of it: the image's layers, no container
    if gold is None:
        raise LeakError(f"{image}: no {WORKSPACE_EXECUTABLE} to attack")
    return check_integrity(client, image, linkage(gold), source_visible=source_visible)


def format_integrity(report: IntegrityReport) -> str:
    got = report.succeeded()
    return f"gold integrity: {report.verdict} ({report.linkage})" + (f": {', '.join(got)}" if got else "")
