"""Every name and path a task is known by, each rule written once.

A task id, its image names (ProgramBench's `<owner>_1776_<repo>` form, so its evaluator
finds our images), the per-task directories under `<out>/work/`, the task directory, and
the JUnit id of a test in a branch. Stages ask `TaskNames`; nothing else spells these.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from taskfoundry.models import Images

TESTS_DIR = "eval/tests"  # a branch's tests, relative to the workspace (ProgramBench's layout)


def work_dir(out: Path) -> Path:
    """Working files of a run: checkouts, build contexts, suites, cached stage results."""
    return out / "work"


def tasks_dir(out: Path) -> Path:
    """Finished task directories of a run."""
    return out / "tasks"


def task_id(owner: str, repo: str, commit: str) -> str:
    """A source's task id (the program kind's, and the stem of the others')."""
    return f"{owner}__{repo}.{commit[:7]}"


def function_task_id(source_id: str, qualname: str) -> str:
    """A function task: one per accepted function of a source."""
    return f"{source_id}__{qualname}"


def feature_task_id(source_id: str, feature: str, level: int) -> str:
    """A feature task: one per feature of a source and level."""
    return f"{source_id}.{feature}.l{level}"


def junit_id(nodeid: str) -> str:
    """A pytest node id as JUnit reports it, run from the workspace root:
    `eval/tests/test_a.py::TestC::test_b[1]` -> `eval.tests.test_a.TestC.test_b[1]`."""
    path, _, rest = nodeid.partition("::")
    return f"{path.removesuffix('.py').replace('/', '.')}.{rest.replace('::', '.')}"


def junit_name(file: str, test: str) -> str:
    """The JUnit id of `test` (`func` or `Class::func`) in the branch's test file `file`
    (a name or a path; only its name counts, the tests directory is flat)."""
    return junit_id(f"{TESTS_DIR}/{PurePosixPath(file).name}::{test}")


def junit_file(junit: str) -> str:
    """The test file of a branch test's JUnit id: `eval.tests.test_a.test_b` -> `test_a.py`."""
    return junit.removeprefix(TESTS_DIR.replace("/", ".") + ".").split(".", 1)[0] + ".py"


class Pinned(Protocol):
    """A source at a commit: a `Checkout` or a `SourceResult`."""

    @property
    def owner(self) -> str: ...

    @property
    def repo(self) -> str: ...

    @property
    def commit(self) -> str: ...


@dataclass(frozen=True)
class TaskNames:
    """One task's names: built from its id parts, the image namespace and the run's out dir."""

    owner: str
    repo: str
    commit: str
    namespace: str
    out: Path

    @classmethod
    def of(cls, src: Pinned, namespace: str, out: Path) -> TaskNames:
        return cls(owner=src.owner, repo=src.repo, commit=src.commit, namespace=namespace, out=out)

    @property
    def task_id(self) -> str:
        return task_id(self.owner, self.repo, self.commit)

    # images ------------------------------------------------------------------------------
    @property
    def _stem(self) -> str:
        return f"{self.owner}_1776_{self.repo}".lower()

    @property
    def build_repo(self) -> str:
        """Repository of the content-addressed build image (tag: a hash of its context)."""
        return f"{self.namespace}/build-{self._stem}"

    @property
    def cleanroom_repo(self) -> str:
        """Repository of the content-addressed cleanroom image."""
        return f"{self.namespace}/cleanroom-{self._stem}"

    @property
    def images(self) -> Images:
        """The ProgramBench names the package stage tags: `:task` and `:task_cleanroom`."""
        return self.images_of("")

    def images_of(self, suffix: str) -> Images:
        """The ProgramBench names of one of the source's tasks (`suffix`: what its id adds to the
        source's, ".feature.l1" say; "" for the program kind's one task)."""
        base = f"{self.namespace}/{self._stem}.{self.commit[:7]}{suffix}".lower()
        return Images(task=f"{base}:task", task_cleanroom=f"{base}:task_cleanroom")

    # paths -------------------------------------------------------------------------------
    @property
    def work_dir(self) -> Path:
        return work_dir(self.out)

    @property
    def build_dir(self) -> Path:
        """Build context, build log and build-agent trajectory."""
        return self.work_dir / "builds" / self.task_id

    @property
    def cleanroom_dir(self) -> Path:
        return self.work_dir / "cleanroom" / self.task_id

    @property
    def generate_dir(self) -> Path:
        """Probe logs and agent trajectories, copied into the task's reports/generation/."""
        return self.work_dir / "generate" / self.task_id

    def suite_dir(self, branch: str) -> Path:
        """One branch's suite: eval/run.sh and eval/tests/."""
        return self.work_dir / "suites" / self.task_id / branch

    @property
    def task_dir(self) -> Path:
        return tasks_dir(self.out) / self.task_id

    def kind_dir(self, kind: str, what: str) -> Path:
        """Build contexts and logs of a kind's own images for this source."""
        return self.work_dir / kind / self.task_id / what


def eval_path(run_dir: Path, task_id: str) -> Path:
    """Where `taskfoundry eval` writes one task's result in a run directory."""
    return run_dir / task_id / f"{task_id}.eval.json"


GRADING_TAG = "task_cleanroom_v6"


def grading_image(images: Images) -> str:
    """ProgramBench's default `--image-tag` (task_cleanroom_v6): the cleanroom with root as its user,
    for its evaluator only; the worker gets `task_cleanroom`."""
    return images.task_cleanroom.rpartition(":")[0] + f":{GRADING_TAG}"


def programbench_image(task_id: str, namespace: str) -> str:
    """The image ProgramBench's loaders (its evaluator, mini-swe-agent) derive from an instance
    id and $PROGRAMBENCH_DOCKER_ORG: the task's `grading_image` when the names agree."""
    return f"{namespace}/{task_id.replace('__', '_1776_')}:{GRADING_TAG}"
