"""`Catalog`: the built tasks of a folder or a dump, filtered, counted, dumped and graded.

    cat = Catalog.load("out")                  # an OUT folder, a tasks folder, a release,
    cat = Catalog.load("tasks.jsonl")          # ... or a JSON / JSON-lines dump
    easy_c = cat.filter(language="c", difficulty="easy").limit(10)
    easy_c.breakdown("kind")                   # {"program": 10}
    grade = cat.evaluate("owner__repo.abc1234", Path("submission.tar.gz"))

A malformed task directory never stops a load: it is left out and named in `cat.errors`.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

import docker
from pydantic import BaseModel, ValidationError

from taskfoundry import atomic
from taskfoundry.catalog.grading import Grade, evaluate_record, grade_of
from taskfoundry.catalog.index import load_index
from taskfoundry.catalog.records import TaskRecord, read_record
from taskfoundry.errors import ConfigError
from taskfoundry.grading.config import EvalConfig
from taskfoundry.naming import eval_path
from taskfoundry.store import open_out

log = logging.getLogger(__name__)
DUMP_SUFFIXES = (".json", ".jsonl")
BREAKDOWN_FIELDS = (
    "kind",
    "language",
    "difficulty",
    "repository",
    "source",
    "executable",
    "tests",
    "gold_integrity",
)
Match = str | Iterable[str] | None


class SolveRate(BaseModel):
    """How many of a group's graded tasks a run resolved."""

    resolved: int = 0
    tasks: int = 0

    @property
    def rate(self) -> float:
        return self.resolved / self.tasks if self.tasks else 0.0


class LoadError(BaseModel):
    """A task (or dump line) the catalog left out, and why."""

    path: str
    message: str


def _below(record: TaskRecord) -> str:
    return f"below the acceptance gate ({'; '.join(record.grade_reasons)}); --below-gate includes it"


def _moment(value: str | date | datetime) -> datetime:
    """A cut-off as an aware datetime: ISO text is parsed, a plain date is its midnight, UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ConfigError(f"not an ISO date: {value!r}") from exc
    moment = value if isinstance(value, datetime) else datetime.combine(value, time.min)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _wanted(value: Match) -> set[str] | None:
    return None if value is None else {value} if isinstance(value, str) else set(value)


class Catalog:
    """An ordered, immutable set of task records (sorted by task id when loaded)."""

    def __init__(self, records: Iterable[TaskRecord], errors: Iterable[LoadError] = ()) -> None:
        self._records = list(records)
        self.errors = list(errors)

    # -- loading ---------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> Catalog:
        """A tasks folder, a folder holding `tasks/` (an OUT folder or a release), a dump, or an
        OUT in object storage (`s3://bucket/prefix`: read through this machine's mirror of it)."""
        path = open_out(path)
        if path.is_dir():
            return cls._from_folder(path)
        if path.is_file() and path.suffix in DUMP_SUFFIXES:
            return cls._from_dump(path)
        raise ConfigError(f"{path}: not a tasks folder nor a .json / .jsonl catalog dump")

    @classmethod
    def _from_folder(cls, path: Path) -> Catalog:
        tasks = path / "tasks" if (path / "tasks").is_dir() else path
        home = tasks.parent if tasks.name == "tasks" else tasks  # release dates: <out>/index.json
        errors: list[LoadError] = []
        try:
            released = {k: e.released_at for k, e in load_index(home).tasks.items()}
        except ConfigError as exc:
            errors.append(LoadError(path=str(home / "index.json"), message=str(exc)))
            released = {}
        records = []
        for task_dir in sorted(p for p in tasks.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if not (task_dir / "task.yaml").is_file():
                continue
            try:
                records.append(read_record(task_dir, released.get(task_dir.name)))
            except ConfigError as exc:
                log.warning("catalog: left out %s: %s", task_dir, exc)
                errors.append(LoadError(path=str(task_dir / "task.yaml"), message=str(exc)))
        return cls(records, errors)

    @classmethod
    def _from_dump(cls, path: Path) -> Catalog:
        try:
            text = path.read_text()
        except OSError as exc:
            raise ConfigError(f"{path}: {exc}") from exc
        records, errors = [], []
        for where, item in _dump_items(path, text):
            try:
                record = (
                    TaskRecord.model_validate_json(item)
                    if isinstance(item, str)
                    else TaskRecord.model_validate(item)
                )
            except ValidationError as exc:
                errors.append(LoadError(path=where, message=str(exc)))
                continue
            if record.path and not Path(record.path).is_absolute():  # relative to the dump
                record = record.model_copy(update={"path": str((path.parent / record.path).resolve())})
            records.append(record)
        return cls(sorted(records, key=lambda r: r.task_id), errors)

    # -- reading ---------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[TaskRecord]:
        return iter(self._records)

    def __contains__(self, task_id: object) -> bool:
        return any(r.task_id == task_id for r in self._records)

    def tasks(self) -> list[TaskRecord]:
        return list(self._records)

    def ids(self) -> list[str]:
        return [r.task_id for r in self._records]

    def get(self, task_id: str) -> TaskRecord:
        for record in self._records:
            if record.task_id == task_id:
                return record
        raise ConfigError(f"no task {task_id!r} in this catalog ({len(self)} tasks)")

    # -- narrowing and counting --------------------------------------------------------

    def filter(
        self,
        *,
        language: Match = None,
        difficulty: Match = None,
        kind: Match = None,
        ids: Match = None,
        released_before: str | date | datetime | None = None,
        released_after: str | date | datetime | None = None,
    ) -> Catalog:
        """The tasks matching every criterion given. A string or a collection of strings
        matches any of them; dates cut on the release date (else the creation date):
        before is strictly before, after is on or after."""
        fields = {"language": _wanted(language), "difficulty": _wanted(difficulty), "kind": _wanted(kind)}
        fields["task_id"] = _wanted(ids)
        before = _moment(released_before) if released_before is not None else None
        after = _moment(released_after) if released_after is not None else None

        def keep(r: TaskRecord) -> bool:
            if any(want is not None and getattr(r, f) not in want for f, want in fields.items()):
                return False
            return (before is None or r.release_date < before) and (after is None or r.release_date >= after)

        return Catalog([r for r in self._records if keep(r)], self.errors)

    def gated(self) -> Catalog:
        """The tasks that met their acceptance gate (or were not gated); those below it are
        kept as errors naming each bar they missed, so a listing can say what it left out."""
        below = [r for r in self._records if r.below_gate]
        left = [LoadError(path=r.path or r.task_id, message=_below(r)) for r in below]
        return Catalog([r for r in self._records if not r.below_gate], [*self.errors, *left])

    def limit(self, n: int) -> Catalog:
        if n < 0:
            raise ConfigError(f"limit must be 0 or more, not {n}")
        return Catalog(self._records[:n], self.errors)

    def breakdown(self, field: str) -> dict[str, int]:
        """`{value: count}` of one field of the records, most common first."""
        if field not in BREAKDOWN_FIELDS:
            raise ConfigError(f"cannot break down by {field!r}; fields: {', '.join(BREAKDOWN_FIELDS)}")
        counts = Counter("unknown" if v is None else str(v) for v in (getattr(r, field) for r in self))
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    # -- writing and grading -----------------------------------------------------------

    def dump(self, path: str | Path) -> Path:
        """Write the records as JSON lines (atomically); `Catalog.load` reads them back."""
        path = Path(path)
        atomic.write_text(path, "".join(r.model_dump_json() + "\n" for r in self))
        return path

    def as_json(self) -> list[dict[str, Any]]:
        return [r.model_dump(mode="json") for r in self]

    def evaluate(
        self,
        task: str | TaskRecord,
        submission: str | Path,
        *,
        config: EvalConfig | None = None,
        run_dir: Path | None = None,
        client: docker.DockerClient | None = None,
    ) -> Grade:
        """Grade `submission` (a tarball with `compile.sh`) against one task of the catalog.
        With `run_dir`, the result is also written as `<run_dir>/<id>/<id>.eval.json`.
        DockerUnavailable when no engine answers."""
        record = self.get(task) if isinstance(task, str) else task
        return evaluate_record(record, Path(submission), config or EvalConfig(), run_dir, client)

    def solve_rates(self, run_dir: str | Path, field: str) -> dict[str, SolveRate]:
        """Resolved of graded tasks per value of `field` (kind, language, difficulty, ...), from
        the grades a run left (`taskfoundry run` or `eval`: `<run>/<id>/<id>.eval.json`);
        tasks the run has no grade for are not counted."""
        if field not in BREAKDOWN_FIELDS:
            raise ConfigError(f"cannot break down by {field!r}; fields: {', '.join(BREAKDOWN_FIELDS)}")
        rates: dict[str, SolveRate] = {}
        for record in self:
            where = eval_path(Path(run_dir), record.task_id)
            if not where.is_file():
                continue
            value = getattr(record, field)
            rate = rates.setdefault("unknown" if value is None else str(value), SolveRate())
            rate.tasks += 1
            rate.resolved += int(self.grade(record, where).resolved)
        return dict(sorted(rates.items()))

    def grade(self, task: str | TaskRecord, eval_json: str | Path) -> Grade:
        """Score an `eval.json` written earlier (by `taskfoundry eval` or `evaluate`) against a task."""
        record = self.get(task) if isinstance(task, str) else task
        return grade_of(record, Path(eval_json))


def _dump_items(path: Path, text: str) -> list[tuple[str, Any]]:
    """(where, item) of a dump: one JSON value a line (.jsonl; a bad line is its own error),
    or a JSON list of records (or {"tasks": [...]})."""
    if path.suffix == ".jsonl":
        return [(f"{path}:{n}", line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from exc
    items = data.get("tasks") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(f"{path}: a catalog dump is a list of task records")
    return [(f"{path}[{n}]", item) for n, item in enumerate(items)]
