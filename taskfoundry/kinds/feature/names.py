"""Names of a feature task: many tasks per source, one per feature and level."""

from __future__ import annotations

from pathlib import Path

from taskfoundry.models import Images
from taskfoundry.naming import TaskNames, tasks_dir

BRANCH = "feature"  # the one branch of the hidden suite (its key names the tarball)


def task_id(names: TaskNames, feature: str, level: int) -> str:
    return f"{names.task_id}.{feature}.l{level}"


def images(names: TaskNames, feature: str, level: int) -> Images:
    """ProgramBench-style tags, one image name per task: `:task_cleanroom` and `:task`."""
    stem = f"{names.namespace}/{names.owner}_1776_{names.repo}.{names.commit[:7]}.{feature}.l{level}".lower()
    return Images(task=f"{stem}:task", task_cleanroom=f"{stem}:task_cleanroom")


def task_dir(names: TaskNames, feature: str, level: int) -> Path:
    return tasks_dir(names.out) / task_id(names, feature, level)


def context_dir(names: TaskNames, what: str) -> Path:
    """Build contexts and logs of the feature kind's images for this source."""
    return names.work_dir / "feature" / names.task_id / what
