"""The compile phase: submission in, hashed gold copies out, compile.sh, workspace back out."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from taskfoundry.evaluate.workspace import executable_sha256
from taskfoundry.harness import scripts
from taskfoundry.harness.models import EvalStepError
from taskfoundry.harness.sandbox import WS, GradingSandbox, TooLarge
from taskfoundry.harness.steps import StepRunner
from taskfoundry.sandbox import tarutil

log = logging.getLogger(__name__)


def read_submission(path: Path, cap_mb: int) -> bytes:
    if not path.is_file():
        raise EvalStepError("missing_submission", f"no submission at {path}")
    size = path.stat().st_size
    if size > cap_mb * 1024 * 1024:
        raise EvalStepError("submission_too_large", f"{path} is {size} bytes (cap {cap_mb} MiB)")
    return path.read_bytes()


def install_helper(box: GradingSandbox) -> None:
    """The hash-removal script, root-owned in /tmp, before any submission code runs."""
    box.put_file(scripts.REMOVE_HASHED.encode(), scripts.REMOVE_HASHED_PATH, mode=0o644)


def remove_hashed(box: GradingSandbox, steps: StepRunner, hashes: list[str], warnings: list[str]) -> None:
    """Delete every workspace file whose sha256 is a gold hash; returns the removed paths."""
    res = steps.run(box, "remove_hashed_files", scripts.remove_hashed_cmd(WS, hashes), root=True)
    removed: list[str] = json.loads(res.stdout.decode() or "{}").get("removed", [])
    if removed:
        warnings.append(f"removed {len(removed)} file(s) equal to the gold executable: {removed[:20]}")


def compile_submission(
    box: GradingSandbox,
    steps: StepRunner,
    submission: bytes,
    gold_hashes: list[str],
    archive: Path,
    warnings: list[str],
) -> str:
    """Compile in `box`; the workspace goes to the tar `archive`; returns the executable's sha256.
    Files removed as gold copies are named in `warnings`."""
    install_helper(box)
    start = time.monotonic()
    _put_submission(box, submission)
    steps.record(
        "copy_submission", f"copy {len(submission)} bytes to {scripts.SUBMISSION_PATH}", start, "", 0
    )
    steps.run(box, "extract_submission", scripts.extract_cmd(WS))
    remove_hashed(box, steps, gold_hashes, warnings)
    steps.run(box, "find_compile_sh", "test -f ./compile.sh", error_code="missing_compile_sh")
    out = steps.run_untrusted(
        box,
        "compile",
        scripts.compile_cmd(),
        scripts.COMPILE_LOG,
        steps.config.compile_timeout,
        env={"HOME": steps.config.home},
    )
    if out.timed_out:
        raise EvalStepError(
            "compile_timeout", f"compile.sh ran past {steps.config.compile_timeout:g}s\n" + out.output[-2000:]
        )
    if out.returncode != 0:
        raise EvalStepError("compile_failed", f"exit {out.returncode}\n" + out.output[-2000:])
    snapshot(box, steps, archive)
    return hash_executable(steps, archive, gold_hashes)


def _put_submission(box: GradingSandbox, submission: bytes) -> None:
    """Owned by the worker, who extracts it and then deletes it."""
    uid = int(box.config.user.split(":")[0])
    parent, name = scripts.SUBMISSION_PATH.rsplit("/", 1)
    box.put_archive_stream(parent, tarutil.tar_file(submission, name, 0o644, uid=uid))


def snapshot(box: GradingSandbox, steps: StepRunner, archive: Path) -> None:
    """The frozen container's workspace, as a tar on the host (capped by the tmpfs size)."""
    start = time.monotonic()
    cap = (steps.config.workspace_mb + 64) * 1024 * 1024
    try:
        with archive.open("wb") as dest:
            box.archive_to(f"{WS}/.", dest, cap)
    except TooLarge as exc:
        raise EvalStepError("workspace_too_large", str(exc)) from exc
    steps.record(
        "snapshot_workspace", f"docker pause; get_archive {WS}/.", start, f"{archive.stat().st_size} bytes", 0
    )


def hash_executable(steps: StepRunner, archive: Path, gold_hashes: list[str]) -> str:
    start = time.monotonic()
    try:
        digest = executable_sha256(archive)
    except EvalStepError as exc:
        steps.record("hash_executable", "sha256 ./executable", start, exc.error_details, 1)
        raise
    steps.record("hash_executable", "sha256 ./executable", start, digest, 0)
    if digest in gold_hashes:
        raise EvalStepError("gold_executable", "./executable is the gold executable itself")
    return digest
