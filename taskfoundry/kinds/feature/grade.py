"""Grading a feature submission through the shared harness.

One `GradingSandbox` of the task's start-state image (read-only root, tmpfs workspace, no
network, pids and memory limits). Trusted steps, as root, before any submitted code runs:
the hidden suite (tests/<branch>.tar.gz) into /workspace/eval, the submission unpacked
into /tmp, the workspace composed (`assets/feature_compose.py`: the level-2 base, the
submission, then every test file, conftest and pytest setting restored from the
reference), eval/ sealed (root only), the rest handed to the worker. Then pytest runs as
the worker with the task's test command, the container is frozen, and the JUnit report is
read by the harness (`harness.report.read_report` via `evaluate.grade.grade_branch`).

The tests import the submission in their own process, so the worker's code runs inside
pytest: it cannot read eval/ or replace the tests, conftests or pytest settings, and the
report must agree with pytest's exit code. Two more layers against code that attacks
pytest from inside: before anything runs, the lines the submission added are read
(`scan.py`: frame access, pytest/pluggy internals, gc referrers, trace hooks, os._exit,
sys.modules/builtins: `forbidden_code`); while it runs, a root-owned plugin records every
outcome outside the process and watches pytest's machinery (`guard.py`:
`grader_tampering`, `incomplete_run`, `guard_unrecorded`).

None of that is where an F2P test's pass is decided: everything the test process sends may
be forged by the code it imports. An F2P test passes only if its run showed every value the
reference returned in it (`task.return_values`, recorded at package time, never in the
container), compared here, on the host, where no submitted code runs (`guard.unproven`).
"""

from __future__ import annotations

import io
import logging
import posixpath
import shlex
import tarfile
from pathlib import Path

import docker
from docker.errors import APIError

from taskfoundry import atomic
from taskfoundry.assets.feature.feature_compose import test_root
from taskfoundry.errors import SandboxError
from taskfoundry.grading.compile import read_submission
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.grade import grade_branch, inject_not_run
from taskfoundry.grading.models import EvaluationResult
from taskfoundry.grading.records import EvalStepError
from taskfoundry.grading.sandbox import LABEL, WS, GradingSandbox, TooLarge
from taskfoundry.grading.steps import StepRunner
from taskfoundry.grading.suite import copy_in
from taskfoundry.grading.task import require_image
from taskfoundry.kinds.feature import guard, scan
from taskfoundry.kinds.feature.evidence import loose_names
from taskfoundry.kinds.feature.results import InterfaceObject
from taskfoundry.kinds.feature.runner import RESULTS
from taskfoundry.kinds.feature.taskfile import FeatureTaskYaml
from taskfoundry.models import TestsJson, load_json_model, load_yaml_model

log = logging.getLogger(__name__)
SUBMISSION = "/tmp/tf-submission.tar.gz"
UNPACKED = "/tmp/tf-submission"
TEST_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}


def grade_feature(
    task_dir: Path,
    submission: Path,
    config: EvalConfig,
    client: docker.DockerClient,
    solution_branch: str = "submission",
) -> EvaluationResult:
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    tests = load_json_model(task_dir / "tests.json", TestsJson)
    branches = sorted(k for k, b in tests.branches.items() if not b.ignored)
    result = EvaluationResult(task_id=task.task_id, solution_branch=solution_branch, test_branches=branches)
    try:
        data = read_submission(submission, config.submission_mb)
        # never pulled: a missing image is TaskImageMissing (the task's problem, not retried);
        # an engine that cannot answer is a SandboxError (infrastructure, retried by the caller)
        require_image(client, task.images.task_cleanroom)
        for branch in branches:
            suite = task_dir / "tests" / f"{branch}.tar.gz"
            if not suite.is_file():
                raise EvalStepError("missing_branch_tarball", f"no {suite}")
            # isolate: false switches both layers off (the attacks' tests show what they stop)
            found = _scan(task, suite, data, client) if config.isolate else scan.Scan([], {})
            if found.hits:
                raise EvalStepError("forbidden_code", "\n".join(str(h) for h in found.hits[:20]))
            expected = list(tests.branches[branch].tests)
            _run(task, branch, suite, data, expected, found.watch, config, client, result)
    except EvalStepError as exc:
        log.info("%s: %s", task.task_id, exc)
        result.error_code, result.error_details = exc.error_code, exc.error_details
        for branch in branches:
            inject_not_run(result, branch, list(tests.branches[branch].tests), exc.error_code)
    return result


def _scan(task: FeatureTaskYaml, suite: Path, data: bytes, client: docker.DockerClient) -> scan.Scan:
    """What the submission added, read against the start state (level 1: the worker's
    workspace; level 2: the stripped tree in the suite it is composed onto)."""
    hidden = _tar_files(suite.read_bytes())
    restore = {k.removeprefix("eval/restore/") for k in hidden if k.startswith("eval/restore/")}
    if task.level == 2:
        start = {k.removeprefix("eval/base/"): v for k, v in hidden.items() if k.startswith("eval/base/")}
    else:
        start = start_state_files(task.images.task_cleanroom, client)
    test_dirs = {d for d in (test_root(rel) for rel in restore) if d}
    try:
        submitted = _tar_files(data)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise EvalStepError("bad_submission_archive", str(exc)) from exc
    replaced = {
        rel
        for rel in submitted
        if rel in restore
        or rel.split("/", 1)[0] == "eval"
        or any(rel.startswith(f"{d}/") for d in test_dirs)
        or rel.rsplit("/", 1)[-1] in scan.STEERING
    }
    return scan.scan_submission(task.level, submitted, start, replaced, _solution(suite.parent.parent))


def _solution(task_dir: Path) -> dict[str, bytes]:
    """The task's reference submission, when it ships one (what it has, the scan allows)."""
    path = task_dir / "solution.tar.gz"
    try:
        return _tar_files(path.read_bytes()) if path.is_file() else {}
    except (tarfile.TarError, EOFError, OSError):
        return {}


def _run(
    task: FeatureTaskYaml,
    branch: str,
    suite: Path,
    data: bytes,
    expected: list[str],
    watch: dict[str, list[int]],
    config: EvalConfig,
    client: docker.DockerClient,
    result: EvaluationResult,
) -> None:
    steps = StepRunner(result.log, config, branch=branch)
    worker = config.user
    with GradingSandbox(task.images.task_cleanroom, config, client) as box:
        copy_in(box, steps, "copy_tests", suite)
        box.put_file(data, SUBMISSION, mode=0o600)
        steps.run(
            box,
            "extract_submission",
            f"mkdir -p {UNPACKED} && tar -xzf {SUBMISSION} -C {UNPACKED} --no-same-owner "
            f"--no-same-permissions && rm -f {SUBMISSION}",
            root=True,
            error_code="bad_submission_archive",
        )
        steps.run(
            box,
            "compose_workspace",
            f"python3 -I {WS}/eval/compose.py {task.level} {UNPACKED} {WS} && rm -rf {UNPACKED} "
            f"&& chown -R {worker} {WS} && chown -R 0:0 {WS}/eval && chmod -R go-rwx {WS}/eval "
            f"&& rm -f {RESULTS} && {guard.PREPARE}{_hide(task) if config.isolate else ''}",
            root=True,
        )
        loose = loose_names(v for values in task.return_values.values() for v in values)
        guard.install(box, watch, task.f2p_files, typed_interface(task.interface), loose)
        env = {"HOME": config.home, **TEST_ENV}
        command = (
            guard.command(task.test_command, worker) if config.isolate else f"cd {WS} && {task.test_command}"
        )
        # as root when guarded: root holds the guard's pipe; the tests run as the worker
        run = steps.run_untrusted(
            box,
            "run_tests",
            command,
            "/tmp/tf-tests.log",
            config.test_timeout,
            env=env,
            grader=config.isolate,
        )
        xml = _results(box, config)
        records = guard.read(box)
    verdict = records.verdict() if config.isolate and not run.timed_out else None
    if verdict:
        raise EvalStepError(*verdict)
    grade_branch(result, branch, expected, set(expected), run, xml)
    if config.isolate:
        guard.unrecorded(result, branch, records)
        guard.wrong_types(result, branch, records, task.return_types)
        guard.unproven(result, branch, records, task.return_values, set(task.values_direct))


def _hide(task: FeatureTaskYaml) -> str:
    """The hidden F2P files become root's and unreadable to the worker (the boot reads them
    as root before dropping to the worker)."""
    paths = " ".join(shlex.quote(f"{WS}/{rel}") for rel in task.f2p_files)
    return f" && chown 0:0 {paths} && chmod 0600 {paths}"


def typed_interface(interface: list[InterfaceObject]) -> list[dict[str, str]]:
    """The tested objects whose returns are typed (validation records them, grading checks)."""
    return [{"module": i.module, "name": i.name} for i in interface if i.top]


def _results(box: GradingSandbox, config: EvalConfig) -> bytes | None:
    try:
        return box.read_file(RESULTS, config.results_mb * 1024 * 1024)
    except (FileNotFoundError, TooLarge):
        return None


def start_state_files(image: str, client: docker.DockerClient) -> dict[str, bytes]:
    """The regular files of /workspace in `image` (no .git), by relative path."""
    try:
        container = client.containers.create(image, ["true"], network_disabled=True, labels=LABEL)
        try:
            chunks, _ = container.get_archive(f"{WS}/.")
            raw = b"".join(chunks)
        finally:
            container.remove(force=True)
    except APIError as exc:
        raise SandboxError(f"cannot read the start state of {image}: {exc}") from exc
    return {k: v for k, v in _tar_files(raw).items() if k.split("/", 1)[0] != ".git"}


def _tar_files(raw: bytes) -> dict[str, bytes]:
    """Regular files of a tar or tar.gz, by normalised relative path (unsafe names skipped)."""
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        for member in tar.getmembers():
            name = posixpath.normpath(member.name.removeprefix("./"))
            if not member.isfile() or name.startswith(("/", "..")) or name == ".":
                continue
            extracted = tar.extractfile(member)
            if extracted is not None:
                out[name] = extracted.read()
    return out


def start_state_submission(task_dir: Path, client: docker.DockerClient, dest: Path) -> Path:
    """The worker's start state, submitted as it is: /workspace of the task's `:task_cleanroom`
    image (no .git) as a submission tarball. Grading it must not resolve the task."""
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as out:
        for name, data in sorted(start_state_files(task.images.task_cleanroom, client).items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            out.addfile(info, io.BytesIO(data))
    atomic.write_bytes(dest, buf.getvalue())
    return dest
