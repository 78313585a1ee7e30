"""The dump attack end to end on a built program task: what ProgramBench#44 describes, tried.

    python benchmarks/dump_attack.py out/tasks/<task id>

As `worker`, in the task's `:task_cleanroom` image, compile assets/gold_rebuilder.c and
preload it into /workspace/executable; if that rebuilt a runnable copy of the gold, submit it
(`compile.sh`: copy it to ./executable) and grade it twice: as shipped, and with
`refuse_gold_code: false`. A task with a static gold gets nothing to submit.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from taskfoundry.assets import asset
from taskfoundry.errors import ConfigError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.grading.summary import score_task
from taskfoundry.grading.task import evaluate_task, load_task
from taskfoundry.kinds.program.replay_attack import submission
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox, docker_client

ATTACK = (
    "cd /tmp && gcc -shared -fPIC -o r.so rebuilder.c && "
    f"LD_PRELOAD=/tmp/r.so TF_REBUILT=/tmp/rebuilt {WORKSPACE_EXECUTABLE} --version >/dev/null 2>&1; "
    "test -s /tmp/rebuilt && chmod +x /tmp/rebuilt && /tmp/rebuilt --version | head -c 200"
)


def rebuild(image: str) -> bytes:
    source = asset("program/gold_rebuilder.c")
    with DockerSandbox(image, SandboxLimits(), client=docker_client()) as box:
        box.put_file(source, "/tmp/rebuilder.c", mode=0o644)
        res = box.exec(ATTACK, timeout=120, user="1000:1000")
        print(f"as worker: exit {res.exit_code}; the copy says: {res.stdout[:120]!r}")
        return box.get_file("/tmp/rebuilt") if res.ok else b""


def main(task_dir: Path) -> None:
    try:
        spec = load_task(task_dir)
    except ConfigError as exc:
        sys.exit(f"dump_attack: not a task directory: {exc}")
    exe = rebuild(spec.task.images.task_cleanroom)
    if not exe:
        print(f"{spec.task_id}: nothing rebuilt (gold: {spec.task.gold_integrity or 'not checked'})")
        return
    expected = {b: spec.expected(b) for b in spec.branches}
    with tempfile.TemporaryDirectory() as tmp:
        path = submission(exe, Path(tmp) / "submission.tar.gz")
        for check in (True, False):
            result = evaluate_task(
                spec, path, EvalConfig(attempts=1, refuse_gold_code=check), docker_client()
            )
            score = score_task(spec.task_id, expected, result, 0.95)
            print(
                f"{spec.task_id}: refuse_gold_code={check}: {score.passed}/{score.tests} "
                f"resolved={score.resolved} error={result.error_code}"
            )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
