"""The package-time self-check of a feature task, through the real grader (scan and guard on).

A task ships only if its own reference resolves it, neither its start state submitted as it is
nor an empty submission does, and the removed code is nowhere the worker can read in its
start-state image (assets/feature_leak.py, run as the worker). A task that fails is removed,
with the reason in the source's reports and the log; one that passes keeps what was checked.
"""

from __future__ import annotations

import difflib
import io
import json
import logging
import shutil
import tarfile
import time
from collections.abc import Mapping
from pathlib import Path

import docker

from taskfoundry import atomic
from taskfoundry.assets import asset
from taskfoundry.errors import SandboxError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.summary import score_task
from taskfoundry.kinds.feature.grade import grade_feature, start_state_submission
from taskfoundry.kinds.feature.runner import CHECK_LIMITS
from taskfoundry.kinds.feature.taskfile import FeatureTaskYaml
from taskfoundry.models import TestsJson, load_json_model, load_yaml_model
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)
MIN_LINE = 30  # shorter lines (`return out`, `else:`) are not distinctive enough to call a leak
LEAK_DIR = "/tmp/tf-leak"
LEAK_LINES = 3  # a file holding this many distinct removed lines holds the removed code


def graded(task_dir: Path, submission: Path, harness: EvalConfig, client: docker.DockerClient) -> str:
    """`resolved`, or what kept the submission from resolving the task."""
    tests = load_json_model(task_dir / "tests.json", TestsJson)
    result = grade_feature(task_dir, submission, harness, client, submission.stem)
    score = score_task(task_dir.name, tests.expected(), result, harness.near_resolved)
    if score.resolved:
        return "resolved"
    if result.error_code:
        return f"{result.error_code}: {(result.error_details or '')[:300]}"
    bad = [
        f"{t.name} {t.status}" + (f" ({t.extra['error_code']})" if t.extra.get("error_code") else "")
        for t in result.test_results
        if t.status != "passed"
    ]
    return f"{score.passed} passed, {len(bad)} not, e.g. {'; '.join(bad[:3])}"


def empty_submission(dest: Path) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz"):
        pass
    dest.write_bytes(buf.getvalue())
    return dest


def leak_lines(original: Mapping[str, bytes], stripped: Mapping[str, str]) -> list[str]:
    """Distinctive lines of the removed code: in the reference, not in the stripped module."""
    out: set[str] = set()
    for rel, text in stripped.items():
        before = original[rel].decode("utf-8", errors="replace").splitlines()
        after = {line.strip() for line in text.splitlines()}
        diff = difflib.SequenceMatcher(None, before, text.splitlines(), autojunk=False)
        for tag, i1, i2, _, _ in diff.get_opcodes():
            if tag in ("replace", "delete"):
                lines = (line.strip() for line in before[i1:i2] if line.strip() not in after)
                out |= {line for line in lines if len(line) >= MIN_LINE and not line.startswith("#")}
    return sorted(out)


def leaks(image: str, lines: list[str], client: docker.DockerClient) -> list[list[str]]:
    """Where in `image` the worker can read one of `lines` (path, line)."""
    if not lines:
        return []
    scanner = asset("feature/feature_leak.py")
    with DockerSandbox(image, CHECK_LIMITS, client=client) as box:
        box.exec(f"mkdir -p {LEAK_DIR}", timeout=60, user="0:0")
        box.put_file(scanner, f"{LEAK_DIR}/scan.py")
        config = {"lines": lines, "need": min(LEAK_LINES, len(lines))}
        box.put_file(json.dumps(config).encode(), f"{LEAK_DIR}/lines.json")
        res = box.exec(f"python3 -I {LEAK_DIR}/scan.py {LEAK_DIR}/lines.json", timeout=900, user="1000:1000")
    if not res.ok:
        raise SandboxError(f"the leak scan of {image} failed: {res.text()[-500:]}")
    found = json.loads(res.text().strip().splitlines()[-1])["found"]
    return [hit for hit in found if not hit[0].startswith(LEAK_DIR)]


def self_check(
    task_dir: Path, lines: list[str], harness: EvalConfig, client: docker.DockerClient, scratch: Path
) -> tuple[str | None, dict[str, str]]:
    """(why the task must not ship or None, what each check found)."""
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    scratch.mkdir(parents=True, exist_ok=True)
    found: dict[str, str] = {}

    def timed(name: str, submission: Path) -> None:
        began = time.monotonic()
        found[name] = graded(task_dir, submission, harness, client)
        found[f"{name}_seconds"] = f"{time.monotonic() - began:.1f}"  # grading time, for the record

    timed("reference", task_dir / "solution.tar.gz")
    timed("start_state", start_state_submission(task_dir, client, scratch / "start_state.tar.gz"))
    timed("empty", empty_submission(scratch / "empty.tar.gz"))
    leaked = leaks(task.images.task_cleanroom, lines, client)
    found["leak_scan"] = f"removed code found: {leaked[:3]}" if leaked else "clean"
    if found["reference"] != "resolved":
        return f"reference_unresolved: {found['reference']}", found
    for name in ("start_state", "empty"):
        if found[name] == "resolved":
            return f"{name}_resolves: a submission without the feature resolves the task", found
    if leaked:
        return f"leak: {found['leak_scan']}", found
    return None, found


def keep_checked(
    tasks: Mapping[Path, list[str]], harness: EvalConfig, client: docker.DockerClient, scratch: Path
) -> list[Path]:
    """The task directories (each with its removed code's lines) that pass the self-check; the
    others are moved into `scratch`, with why in every kept task's report and there."""
    kept, dropped = [], {}
    for path, lines in tasks.items():
        why, found = self_check(path, lines, harness, client, scratch / path.name)
        if why is None:
            kept.append((path, found))
            continue
        log.warning("%s: not packaged (%s)", path.name, why)
        dropped[path.name] = why
        kept_aside = scratch / path.name / "task"  # out of the tasks folder, there to look at
        shutil.rmtree(kept_aside, ignore_errors=True)
        shutil.move(path, kept_aside)
    for path, found in kept:
        report = json.loads((path / "reports" / "feature.json").read_text())
        report |= {"selfcheck": found, "selfcheck_dropped": dropped}
        atomic.write_json(path / "reports" / "feature.json", report)
    scratch.mkdir(parents=True, exist_ok=True)
    atomic.write_json(scratch / "dropped.json", dropped)  # this run's, empty too: none stale
    return [path for path, _ in kept]
