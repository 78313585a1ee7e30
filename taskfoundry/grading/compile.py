"""The compile phase: submission in, hashed gold copies out, compile.sh, workspace back out."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from taskfoundry.grading import scripts
from taskfoundry.grading.gold import GoldRef
from taskfoundry.grading.goldcode import THRESHOLD, gold_code_share, submission_digest
from taskfoundry.grading.records import EvalStepError
from taskfoundry.grading.sandbox import WS, GradingSandbox, TooLarge
from taskfoundry.grading.steps import StepRunner
from taskfoundry.grading.workspace import escaping_links, executable_bytes, executable_sha256
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


def remove_hashed(box: GradingSandbox, steps: StepRunner, gold: GoldRef, warnings: list[str]) -> None:
    """Delete every workspace file whose sha256 is a gold hash (only files of the gold's size
    are hashed); the removed paths are named in `warnings`."""
    command = scripts.remove_hashed_cmd(WS, gold.hashes, gold.sizes)
    res = steps.run(box, "remove_hashed_files", command, root=True)
    removed: list[str] = json.loads(res.stdout.decode() or "{}").get("removed", [])
    if removed:
        warnings.append(f"removed {len(removed)} file(s) equal to the gold executable: {removed[:20]}")


def compile_submission(
    box: GradingSandbox,
    steps: StepRunner,
    submission: bytes,
    gold: GoldRef,
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
    remove_hashed(box, steps, gold, warnings)
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
    refuse_escaping_links(archive)
    digest = hash_executable(steps, archive, gold.hashes)
    refuse_gold_code(steps, archive, gold, submission, warnings)
    return digest


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


def refuse_escaping_links(archive: Path) -> None:
    """A link in the compiled workspace that leads out of it is the submission's doing (the
    engine refuses to copy it into a branch container): a verdict, never infrastructure."""
    bad = escaping_links(archive)
    if bad:
        raise EvalStepError("workspace_unsafe_link", f"links that leave the workspace: {bad[:10]}")


def refuse_gold_code(
    steps: StepRunner, archive: Path, gold: GoldRef, submission: bytes, warnings: list[str]
) -> None:
    """`gold_code` when ./executable maps most of the gold's code pages (a dump, a padded or
    re-wrapped gold), unless the submission is the task's own reference (by its content)."""
    if not gold.pages or not steps.config.refuse_gold_code:
        return
    start = time.monotonic()
    share = gold_code_share(executable_bytes(archive), gold.pages)
    steps.record("gold_code", "share of the gold's code pages in ./executable", start, f"{share:.3f}", 0)
    if share < THRESHOLD:
        return
    if gold.reference_digest and submission_digest(submission) == gold.reference_digest:
        warnings.append("./executable is the gold's code, built by the task's own reference submission")
        return
    raise EvalStepError(
        "gold_code",
        f"./executable maps {share:.0%} of the gold's code pages: the gold's code is not a rebuild",
    )
