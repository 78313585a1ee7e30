"""Our tasks in inspect_ai: `inspect eval taskfoundry/tasks -T tasks=OUT --model PROVIDER/MODEL`.

A Task whose samples are the catalog's tasks (any kind), each worked in the sandbox
`taskfoundry`: the worker's own container (`solve.container.WorkerBox`: the `:task_cleanroom`
image, uid 1000, no network, no-new-privileges), so an inspect agent sees exactly what
`taskfoundry solve` shows one. The scorer packs the workspace as the worker (never the gold)
and grades it with the catalog's grading, the function `taskfoundry eval` runs: the score is
the pass rate over the counted tests, `answer` says passed/total.

Registered with inspect through the `inspect_ai` entry point (pyproject), so installing
taskfoundry with its `inspect` extra is all `inspect eval` needs. Needs the `inspect_ai` package.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any, Literal, overload

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState, basic_agent
from inspect_ai.tool import bash
from inspect_ai.util import (
    ExecResult,
    SandboxEnvironment,
    SandboxEnvironmentSpec,
    SandboxUserUnsupportedError,
    sandbox,
    sandboxenv,
)

from taskfoundry.catalog import Catalog
from taskfoundry.catalog.grading import engine
from taskfoundry.solve.config import Isolation
from taskfoundry.solve.container import WorkerBox
from taskfoundry.solve.view import WorkerView, load_view

SANDBOX = "taskfoundry"
EXEC_TIMEOUT = 180  # the solve loop's default per command


def sample_of(task_dir: Path) -> Sample:
    """One task as an inspect sample: the worker's task text, its own sandbox."""
    view = load_view(task_dir)
    text = f"{view.task_text}\n\nWork in {view.workspace}. Leave there: {view.answer}."
    return Sample(
        id=view.task_id,
        input=text,
        metadata={"task_dir": str(task_dir), "kind": view.kind, "language": view.language},
        sandbox=SandboxEnvironmentSpec(SANDBOX, str(task_dir)),
    )


@task
def tasks(
    tasks: str = "out", kind: str | None = None, limit: int | None = None, message_limit: int = 60
) -> Task:
    """The tasks of `tasks` (an OUT folder, its tasks/ or a release), of `kind` if given, the
    first `limit` by id; an agent with bash in the worker's container and a submit tool."""
    cat = Catalog.load(tasks).filter(kind=kind)
    if limit is not None:
        cat = cat.limit(limit)
    samples = [sample_of(Path(r.path)) for r in cat if r.path is not None]
    if not samples:
        raise ValueError(f"no task to run in {tasks}" + (f" of kind {kind}" if kind else ""))
    return Task(
        dataset=samples,
        solver=basic_agent(tools=[bash(timeout=EXEC_TIMEOUT)], max_attempts=1, message_limit=message_limit),
        scorer=graded(),
        name="taskfoundry",
    )


@scorer(metrics=[mean()])
def graded() -> Any:
    """The pass rate `taskfoundry eval` gives the workspace as the worker leaves it."""

    async def score(state: TaskState, target: Target) -> Score:
        box = sandbox().as_type(WorkerSandbox).box
        data = await asyncio.to_thread(box.pack_submission)
        task_dir = Path(state.metadata["task_dir"])
        grade = await asyncio.to_thread(_grade, task_dir, data)
        return Score(
            value=grade["pass_rate"],
            answer=f"{grade['passed']}/{grade['total']}",
            explanation=grade["error_code"] or ("resolved" if grade["resolved"] else "not resolved"),
            metadata=grade,
        )

    return score


def _grade(task_dir: Path, submission: bytes) -> dict[str, Any]:
    cat = Catalog.load(task_dir.parent).filter(ids=[task_dir.name])
    with tempfile.TemporaryDirectory(prefix="tf-inspect-") as tmp:
        path = Path(tmp) / "submission.tar.gz"
        path.write_bytes(submission)
        grade = cat.evaluate(task_dir.name, path)
    return grade.model_dump(include={"task_id", "passed", "total", "pass_rate", "resolved", "error_code"})


@sandboxenv(name=SANDBOX)
class WorkerSandbox(SandboxEnvironment):
    """inspect's sandbox interface over the worker's container. Commands run as the worker;
    another user is refused (root would read the gold)."""

    def __init__(self, box: WorkerBox) -> None:
        super().__init__()
        self.box = box

    @classmethod
    async def sample_init(
        cls, task_name: str, config: Any, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        view: WorkerView = load_view(Path(str(config)))
        box = WorkerBox(view, Isolation(), engine())
        await asyncio.to_thread(box.__enter__)
        await asyncio.to_thread(box.prepare)
        return {"default": cls(box)}

    @classmethod
    async def sample_cleanup(
        cls, task_name: str, config: Any, environments: dict[str, SandboxEnvironment], interrupted: bool
    ) -> None:
        for env in environments.values():
            if isinstance(env, WorkerSandbox):
                await asyncio.to_thread(env.box.__exit__, None, None, None)

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        if user not in (None, "worker", "agent", self.box.limits.user):
            raise SandboxUserUnsupportedError(f"commands run as the worker here, not {user}")
        stdin = input.encode() if isinstance(input, str) else input
        workdir = self._path(cwd) if cwd else None
        res = await asyncio.to_thread(
            self.box.exec, cmd, timeout=float(timeout or EXEC_TIMEOUT), stdin=stdin, env=env, workdir=workdir
        )
        if res.timed_out:
            raise TimeoutError(f"{cmd[:1]} ran over {timeout} s")
        out, err = res.stdout.decode(errors="replace"), res.stderr.decode(errors="replace")
        return ExecResult(success=res.exit_code == 0, returncode=res.exit_code, stdout=out, stderr=err)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode() if isinstance(contents, str) else contents
        path = self._path(file)
        # through the worker's own shell, so the file is the worker's and lands only where it may write
        write = ["sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"', "sh", path]
        res = await asyncio.to_thread(self.box.exec, write, timeout=60.0, stdin=data)
        if not res.ok:
            raise PermissionError(f"cannot write {path}: {res.text()[-500:]}")

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        path = self._path(file)
        res = await asyncio.to_thread(self.box.exec, ["cat", path], timeout=60.0)
        if not res.ok:
            raise FileNotFoundError(f"{path}: {res.text()[-300:]}")
        return res.stdout.decode() if text else res.stdout

    def _path(self, path: str) -> str:
        """inspect's relative paths are the sample's own folder's: the workspace."""
        return path if path.startswith("/") else f"{self.box.view.workspace}/{path}"
