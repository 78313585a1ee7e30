"""One typed record per built task, read from its task directory (or from a catalog dump).

A record holds what a harness filters and reports on: ids, kind, language, difficulty,
source and commit, dates, image names, test counts and the task's stats. It is read
from `task.yaml` + `tests.json` with the evaluator's models and checks, so a task the
catalog lists is a task the evaluator can load.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError

from taskfoundry.errors import ConfigError
from taskfoundry.grading.task import TaskSpec
from taskfoundry.models import GoldIntegrity, TaskStats, TaskYaml, TestsJson, load_json_model
from taskfoundry.naming import TaskNames

RECORD_SCHEMA_VERSION = 1
DEFAULT_KIND = str(TaskYaml.model_fields["kind"].default)  # a task.yaml without `kind:` (older tasks)
SOLUTION = "solution.tar.gz"  # the reference submission a task directory may carry


class TaskRecord(BaseModel):
    """A built task as the catalog lists it; a line of a catalog dump."""

    schema_version: int = RECORD_SCHEMA_VERSION
    task_id: str
    kind: str = DEFAULT_KIND
    language: str
    difficulty: str
    difficulty_score: float
    repository: str
    commit: str
    source: str
    created_at: datetime
    released_at: datetime | None = Field(None, description="upstream release date, where known")
    executable: str
    image: str = Field(description="the build environment image (`:task`)")
    cleanroom_image: str = Field(description="the worker's start state (`:task_cleanroom`)")
    tests: int = Field(description="hidden tests that count (branches not ignored)")
    branches: int = Field(description="branches of the hidden suite that count")
    line_rate: float = Field(description="first-party line coverage of the kept tests")
    mutation_score: float | None = Field(None, description="killed / mutants, where measured")
    replay_pass_rate: float | None = Field(
        None, description="share of the tests a lookup table of the gold on public probes passes"
    )
    gold_integrity: GoldIntegrity | None = Field(
        None,
        description="sealed, instrumentable or source_visible (reports/integrity.json); null: not checked",
    )
    benchmark_grade: bool | None = Field(
        None, description="met its build's acceptance gate (task.yaml's grade); null: not gated"
    )
    grade_reasons: list[str] = Field(default_factory=list, description="the gate's bars it missed")
    stats: TaskStats = Field(default_factory=TaskStats)
    path: str | None = Field(None, description="the task directory, when loaded from one")

    @property
    def release_date(self) -> datetime:
        """The date a benchmark version cuts on: released, else created (timezone-aware)."""
        moment = self.released_at or self.created_at
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    @property
    def below_gate(self) -> bool:
        """Built, but short of its acceptance gate: listed and released only when asked for."""
        return self.benchmark_grade is False

    @property
    def task_dir(self) -> Path | None:
        return Path(self.path) if self.path else None

    def names(self, namespace: str, out: Path) -> TaskNames:
        """The task's names (images, task directory) under `namespace` in the output folder `out`."""
        owner, _, repo = self.repository.partition("/")
        names = TaskNames(owner=owner, repo=repo, commit=self.commit, namespace=namespace, out=out)
        if names.task_id != self.task_id:
            raise ConfigError(
                f"{self.task_id}: repository {self.repository!r} and commit name {names.task_id}"
            )
        return names

    @property
    def solution(self) -> Path | None:
        """The task's reference submission, if its directory carries one."""
        found = self.task_dir / SOLUTION if self.task_dir else None
        return found if found and found.is_file() else None


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: a catalog reads thousands


def load_spec(task_dir: Path) -> tuple[TaskSpec, dict[str, Any]]:
    """The task as the evaluator's `load_task` reads it (same models, same id check), plus the
    raw task.yaml: fields newer than this TaskYaml (stats.mutation_score) are read there.
    ConfigError naming the file when anything is malformed."""
    path = task_dir / "task.yaml"
    try:
        data = yaml.load(path.read_text(), Loader=_LOADER)
        task = TaskYaml.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    tests = load_json_model(task_dir / "tests.json", TestsJson)
    if task.task_id != task_dir.name:
        raise ConfigError(f"{task_dir}: task_id {task.task_id!r} is not the directory's name")
    return TaskSpec(task_dir=task_dir, task=task, tests=tests), data


def read_record(task_dir: Path, released_at: datetime | None = None) -> TaskRecord:
    """The record of one task directory; ConfigError naming the file when it is malformed."""
    spec, data = load_spec(task_dir)
    stats = data.get("stats")
    stats = stats if isinstance(stats, dict) else {}
    task = spec.task
    try:
        return TaskRecord(
            task_id=task.task_id,
            kind=task.kind,
            language=task.language,
            difficulty=task.difficulty,
            difficulty_score=task.difficulty_score,
            repository=task.repository,
            commit=task.commit,
            source=task.source,
            created_at=task.created_at,
            released_at=released_at,
            executable=task.executable,
            image=task.images.task,
            cleanroom_image=task.images.task_cleanroom,
            tests=sum(len(spec.expected(b)) for b in spec.branches),
            branches=len(spec.branches),
            line_rate=task.stats.line_rate,
            mutation_score=stats.get("mutation_score"),
            replay_pass_rate=stats.get("replay_pass_rate"),
            gold_integrity=task.gold_integrity,
            benchmark_grade=task.grade.benchmark_grade if task.grade else None,
            grade_reasons=task.grade.reasons if task.grade else [],
            stats=task.stats,
            path=str(task_dir.resolve()),
        )
    except ValueError as exc:  # pydantic's ValidationError: e.g. a mutation_score that is not a number
        raise ConfigError(f"{task_dir / 'task.yaml'}: {exc}") from exc
