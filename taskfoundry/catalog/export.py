"""Tasks written where another harness's loader reads them (`taskfoundry export`).

`programbench`: ProgramBench's loaders (its evaluator, mini-swe-agent's `mini-extra
programbench`, OpenHands' runner) read `<tasks dir>/<instance id>/task.yaml` and `tests.json`
(the installed `programbench` package's `data/tasks/`), name the image
`$PROGRAMBENCH_DOCKER_ORG/<id>:task_cleanroom_v6` (`naming.programbench_image`), and read the hidden suite
from `$PROGRAMBENCH_BLOB_DIR/<id>/tests/<branch>.tar.gz`: the task directory itself. So the
export copies the two definition files, nothing hidden, and says the two variables to set.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from taskfoundry import atomic
from taskfoundry.catalog.catalog import Catalog
from taskfoundry.catalog.records import TaskRecord
from taskfoundry.errors import ReleaseError
from taskfoundry.models import Images
from taskfoundry.naming import grading_image, programbench_image

FORMATS = ("programbench",)
#: what ProgramBench's loaders read of a task directory
DEFINITION = ("task.yaml", "tests.json")


@dataclass
class Export:
    """What an export wrote and what its reader must be told."""

    dest: Path
    written: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def export_programbench(cat: Catalog, dest: Path) -> Export:
    """Each program task of `cat` as DEST/<id>/{task.yaml,tests.json}, one rename per task;
    other kinds are skipped with the reason. Refuses tasks of two image namespaces (one
    $PROGRAMBENCH_DOCKER_ORG names them all) or tasks from different folders."""
    done = Export(dest=dest)
    program = [r for r in cat if r.kind == "program"]
    for record in cat:
        if record.kind != "program":
            done.skipped[record.task_id] = (
                f"a {record.kind} task: ProgramBench's loaders read program tasks only"
            )
    if not program:
        raise ReleaseError(f"nothing to export: no program task among the {len(cat)} selected")
    namespace = _one(r.cleanroom_image.partition("/")[0] for r in program)
    blob_dir = _one(str(_task_dir(r).parent) for r in program)
    for record in program:
        _check_names(record, namespace)
    for record in program:
        with atomic.staged_dir(dest / record.task_id) as tmp:
            for name in DEFINITION:
                shutil.copyfile(_task_dir(record) / name, tmp / name)
            atomic.readable(tmp)
        done.written.append(record.task_id)
    done.env = {"PROGRAMBENCH_DOCKER_ORG": namespace, "PROGRAMBENCH_BLOB_DIR": blob_dir}
    return done


def _task_dir(record: TaskRecord) -> Path:
    if record.path is None:
        raise ReleaseError(f"{record.task_id}: a dump's record has no task directory to export")
    return Path(record.path).resolve()


def _one(values: object) -> str:
    found = sorted(set(values))  # type: ignore[call-overload]
    if len(found) != 1:
        raise ReleaseError(
            f"the tasks differ in {found}: ProgramBench's loaders take one image namespace and one "
            "blob folder; export each group on its own"
        )
    return str(found[0])


def _check_names(record: TaskRecord, namespace: str) -> None:
    """The harness derives the image's name from the id: it must be the alias the build made."""
    ours = grading_image(Images(task=record.image, task_cleanroom=record.cleanroom_image))
    theirs = programbench_image(record.task_id, namespace)
    if ours != theirs:
        raise ReleaseError(
            f"{record.task_id}: ProgramBench's loaders would run {theirs}, but the task's image is {ours}"
        )
