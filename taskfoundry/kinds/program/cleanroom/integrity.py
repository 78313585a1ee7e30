"""reports/integrity.json: the worker's attacks on the gold, tried in the cleanroom as shipped.

Execute-only (mode 0111) stops `read(2)`; it does not stop the dynamic loader, which runs
code of the worker's inside the gold's process (docs/evaluator.md, "Execute-only"). This
module proves, per task, what holds: as `worker`, in a container of the cleanroom image,
plain and again with `no-new-privileges` and every capability dropped, it runs
`assets/integrity_probe.py` (a preloaded library, an audit module, a library path with a
fake libc, /proc/<pid>/maps|mem|exe and ptrace of a live gold, a core dump). A task whose
gold gave anything away is `instrumentable`, and says so in task.yaml, `show`, the catalog
and the dashboard.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import docker
from pydantic import ValidationError

from taskfoundry.assets import asset
from taskfoundry.errors import SandboxError
from taskfoundry.kinds.program.cleanroom.reports import AttackResult, IntegrityReport, Linkage
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox

PROBE_PATH = "/tmp/tf-integrity.py"
SCRATCH = "/tmp/tf-integrity"
WORKER_USER = "1000:1000"  # cleanroom.image.WORKER
#: The worker's container, as given (`plain`) and as a careful harness would start it.
VARIANTS: dict[str, dict[str, Any]] = {
    "plain": {},
    "no-new-privileges": {"security_opt": ["no-new-privileges"], "cap_drop": ["ALL"]},
}


def check_integrity(
    client: docker.DockerClient,
    image: str,
    linkage: Linkage,
    *,
    gold: str = WORKSPACE_EXECUTABLE,
    source_visible: bool = False,
    user: str = WORKER_USER,
) -> IntegrityReport:
    """Run every attack as `user` (the worker; `agent` for ProgramBench's harnesses) in
    `image`, under each of VARIANTS."""
    start = time.monotonic()
    if source_visible:  # a script its interpreter must read: visible by design
        return IntegrityReport(image=image, gold=gold, linkage=linkage, verdict="source_visible")
    # the variants' containers at once: each waits out a gold that never exits (3 s a try)
    with ThreadPoolExecutor(len(VARIANTS)) as pool:
        runs = {
            name: pool.submit(_attack, client, image, (gold, user), opts) for name, opts in VARIANTS.items()
        }
        attacks = {name: run.result() for name, run in runs.items()}
    report = IntegrityReport(image=image, gold=gold, linkage=linkage, verdict="sealed", attacks=attacks)
    report.verdict = "instrumentable" if report.succeeded() else "sealed"
    report.seconds = round(time.monotonic() - start, 2)
    return report


def _attack(
    client: docker.DockerClient, image: str, target: tuple[str, str], hardening: dict[str, Any]
) -> dict[str, AttackResult]:
    gold, user = target
    probe = asset("program/integrity_probe.py")
    with DockerSandbox(image, SandboxLimits(), client=client, hardening=hardening) as box:
        box.put_file(probe, PROBE_PATH, mode=0o644)
        res = box.exec(["python3", "-I", PROBE_PATH, gold, SCRATCH], timeout=180, user=user, workdir="/tmp")
    if not res.ok:
        raise SandboxError(f"the integrity probe failed in {image}: {res.text()[-1000:]}")
    try:
        raw = json.loads(res.stdout.decode())
        return {name: AttackResult.model_validate(value) for name, value in raw.items()}
    except (ValueError, ValidationError) as exc:
        raise SandboxError(f"the integrity probe's report is unreadable: {exc}") from exc
