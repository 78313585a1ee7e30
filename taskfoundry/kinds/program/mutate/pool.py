"""The mutation stage's worker containers, set up once and used by every step of the stage.

Setting a worker up is most of a small analysis's cost, and on a Rust program most of any:
the reference rebuilt and the worker's mutants built into one schema program. The pool
does it once: the first analysis, the guided step's search (the survivors are already in
their worker's schema) and the second analysis (the new tests copied in) use the same
containers. Each worker holds a contiguous run of the sampled mutants (mostly one file
after another); a mutant is always handled by the worker whose schema holds it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.rebuild import RebuildPlan
from taskfoundry.kinds.program.mutate.session import SCRATCH
from taskfoundry.kinds.program.mutate.worker import MutantWorker
from taskfoundry.kinds.program.settings import MutationConfig
from taskfoundry.mutation.operators import Mutant
from taskfoundry.sandbox.base import SandboxLimits
from taskfoundry.sandbox.docker import DockerSandbox, docker_client

LIMITS = SandboxLimits(memory_mb=2048, pids=1024, output_bytes=16 * 1024 * 1024)
# the tests' directories in memory: a test's files, its program's working directory and
# tfrun's ownership changes cost a fifth of what they cost on the image's fuse-overlayfs
SCRATCH_MOUNT = {SCRATCH: "rw,exec,nosuid,nodev,size=512m,mode=0755"}
T = TypeVar("T")
R = TypeVar("R")


def split_evenly(items: list[T], workers: int) -> list[list[T]]:
    """Contiguous runs of about equal size: each worker mostly rebuilds one file after another."""
    n = max(1, min(workers, len(items)))
    size, extra = divmod(len(items), n)
    chunks, at = [], 0
    for i in range(n):
        end = at + size + (1 if i < extra else 0)
        chunks.append(items[at:end])
        at = end
    return chunks


@contextmanager
def worker_box(image: str) -> Iterator[DockerSandbox]:
    """A container of `image` for one worker, with its own client (docker-py's client is not
    shared across threads: each worker's is used by one thread at a time)."""
    client = docker_client()
    try:
        labels = {"taskfoundry.stage": "mutation"}
        with DockerSandbox(image, LIMITS, client=client, labels=labels, tmpfs=SCRATCH_MOUNT) as box:
            yield box
    finally:
        client.close()


class WorkerPool:
    """`config.workers` containers of the build image `image`, each a MutantWorker; closed
    (the containers removed) when the `with` block ends."""

    def __init__(self, image: str, rebuild: RebuildPlan, config: MutationConfig, harness: EvalConfig) -> None:
        self.image, self.rebuild, self.config, self.harness = image, rebuild, config, harness
        self.workers: list[MutantWorker] = []
        self._owner: dict[str, int] = {}  # mutant id -> the index of the worker that holds it
        self._suite: Path | None = None
        self._stack = ExitStack()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stack.close()

    def start(self, suite: Path, mutants: Sequence[Mutant]) -> None:
        """The workers, each set up (in parallel) with `suite` and its run of `mutants`."""
        chunks = split_evenly(list(mutants), self.config.workers)
        boxes = [self._stack.enter_context(worker_box(self.image)) for _ in chunks]
        self.workers = [MutantWorker(box, self.rebuild, self.config, self.harness) for box in boxes]
        self._parallel(lambda w, chunk: w.setup(suite, chunk), list(zip(self.workers, chunks, strict=True)))
        self._owner = {m.id: i for i, chunk in enumerate(chunks) for m in chunk}
        self._suite = suite

    def use_suite(self, suite: Path) -> None:
        """Every worker's tests replaced by `suite`'s (the suite with the guided step's tests)."""
        if suite != self._suite:
            self._parallel(lambda w, _: w.use_suite(suite), [(w, None) for w in self.workers])
            self._suite = suite

    def each(
        self, items: list[T], mutant: Callable[[T], str], work: Callable[[MutantWorker, list[T]], R]
    ) -> list[R]:
        """`work` on each worker with the items (in their order) whose mutant (`mutant(item)`,
        an id) it holds, the workers in parallel; a mutant no worker holds goes to the first."""
        if not self.workers:
            raise RuntimeError("the worker pool was not started")
        groups: dict[int, list[T]] = {i: [] for i in range(len(self.workers))}
        for item in items:
            groups[self._owner.get(mutant(item), 0)].append(item)
        pairs = [(self.workers[i], group) for i, group in groups.items() if group]
        return self._parallel(work, pairs)

    @staticmethod
    def _parallel(work: Callable[[MutantWorker, T], R], pairs: list[tuple[MutantWorker, T]]) -> list[R]:
        if not pairs:
            return []
        with ThreadPoolExecutor(len(pairs), thread_name_prefix="mutation") as pool:
            # each in a copy of this context: the workers' progress counts are this stage's
            runs = [pool.submit(contextvars.copy_context().run, work, w, item) for w, item in pairs]
            return [run.result() for run in runs]
