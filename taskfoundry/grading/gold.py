"""What the grader knows of the gold: its hashes and sizes (for deleting copies), its code
pages (for refusing its code however wrapped) and the reference submission's digest."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import docker

from taskfoundry.grading.goldcode import code_pages
from taskfoundry.images.build import read_image_path
from taskfoundry.layout import REFERENCE_EXECUTABLE, WORKSPACE_EXECUTABLE
from taskfoundry.models import TaskYaml
from taskfoundry.sandbox.tarutil import extract_one


@dataclass(frozen=True)
class GoldRef:
    hashes: list[str]
    sizes: frozenset[int] = frozenset()
    pages: frozenset[bytes] = frozenset()
    reference_digest: str = ""
    notes: list[str] = field(default_factory=list)


def load_gold(client: docker.DockerClient, task: TaskYaml) -> GoldRef:
    """Read the gold from the task's cleanroom image (the grader is root; the worker is not)."""
    data = read_gold(client, task.images.task_cleanroom)
    if data is None:
        return GoldRef(task.eval_clean_hashes, reference_digest=task.reference_digest)
    known = hashlib.sha256(data).hexdigest() in task.eval_clean_hashes
    # sizes filter the hashing only when the image's gold is the one eval_clean_hashes names
    # (ProgramBench#54: stale hashes): else every file is hashed, as before
    return GoldRef(
        task.eval_clean_hashes,
        sizes=frozenset({len(data)}) if known else frozenset(),
        pages=frozenset(code_pages(data)),
        reference_digest=task.reference_digest,
        notes=[] if known else ["the cleanroom's gold is not among eval_clean_hashes"],
    )


def read_gold(client: docker.DockerClient, image: str) -> bytes | None:
    for path in (REFERENCE_EXECUTABLE, WORKSPACE_EXECUTABLE):
        found = read_image_path(client, image, path)
        if found is not None:
            return extract_one([found])
    return None
