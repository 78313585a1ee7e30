"""What a reader sees of a catalog: its table (terminal, dashboard) and a release's dataset card."""

from __future__ import annotations

from pydantic import BaseModel, Field

from taskfoundry.catalog.catalog import Catalog
from taskfoundry.catalog.records import TaskRecord
from taskfoundry.models import TaskStats

COLUMNS = (
    "task",
    "kind",
    "language",
    "difficulty",
    "tests",
    "recall",
    "coverage",
    "mutation score",
    "gold",
    "grade",
)


def catalog_rows(cat: Catalog) -> list[dict[str, str]]:
    """One row per task: the table of `taskfoundry tasks` and of the dashboard's catalog artifact."""
    return [
        {
            "task": r.task_id,
            "kind": r.kind,
            "language": r.language,
            "difficulty": r.difficulty,
            "tests": str(r.tests),
            "recall": recall_cell(r.stats),
            "coverage": f"{r.line_rate:.1%}",
            "mutation score": "n/a" if r.mutation_score is None else f"{r.mutation_score:.1%}",
            "gold": r.gold_integrity or "n/a",
            "grade": grade_cell(r),
        }
        for r in cat
    ]


def grade_cell(record: TaskRecord) -> str:
    """`benchmark`, `below gate` (task.yaml's grade.reasons say why) or n/a (not gated)."""
    if record.benchmark_grade is None:
        return "n/a"
    return "benchmark" if record.benchmark_grade else "below gate"


def recall_cell(stats: TaskStats) -> str:
    """Tests that recall a published algorithm's bytes: a count, `+` when they count towards
    resolved (the config kept them in), else they are ignored tests."""
    return f"{stats.recall_tests}{'+' if stats.recall_in_resolve and stats.recall_tests else ''}"


class Spread(BaseModel):
    """Mean, least and most of a figure over the tasks that have it."""

    tasks: int = 0
    mean: float | None = None
    min: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        if not values:
            return cls()
        return cls(
            tasks=len(values), mean=round(sum(values) / len(values), 4), min=min(values), max=max(values)
        )

    def text(self) -> str:
        if not self.tasks or self.mean is None:
            return "not measured"
        over = f"{self.tasks} task" + ("s" if self.tasks != 1 else "")
        return f"mean {self.mean:.1%}, min {self.min:.1%}, max {self.max:.1%} (over {over})"


class CardSummary(BaseModel):
    """The numbers of a dataset card."""

    tasks: int
    tests: int
    by_kind: dict[str, int] = Field(default_factory=dict)
    by_language: dict[str, int] = Field(default_factory=dict)
    by_difficulty: dict[str, int] = Field(default_factory=dict)
    coverage: Spread = Field(default_factory=Spread)
    mutation_score: Spread = Field(default_factory=Spread)
    recall_tests: int = Field(0, description="tests that recall an algorithm's bytes, over all tasks")
    recall_tasks: int = Field(0, description="tasks with at least one")
    recall_in_resolve: int = Field(0, description="of those tasks, the ones whose resolve metric counts them")

    @classmethod
    def of(cls, cat: Catalog) -> CardSummary:
        return cls(
            tasks=len(cat),
            tests=sum(r.tests for r in cat),
            by_kind=cat.breakdown("kind"),
            by_language=cat.breakdown("language"),
            by_difficulty=cat.breakdown("difficulty"),
            coverage=Spread.of([r.line_rate for r in cat]),
            mutation_score=Spread.of([r.mutation_score for r in cat if r.mutation_score is not None]),
            recall_tests=sum(r.stats.recall_tests for r in cat),
            recall_tasks=sum(r.stats.recall_tests > 0 for r in cat),
            recall_in_resolve=sum(r.stats.recall_tests > 0 and r.stats.recall_in_resolve for r in cat),
        )

    def recall_text(self) -> str:
        if not self.recall_tests:
            return "none"
        kept = f"; counted towards resolved in {self.recall_in_resolve}" if self.recall_in_resolve else ""
        return (
            f"{self.recall_tests} tests in {self.recall_tasks} tasks pin a published algorithm's bytes "
            f"(a digest, codec output): out of the resolve metric (`ignored_tests`, reason `recall`){kept}"
        )


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in counts.items()) or "none"


def markdown_table(rows: list[dict[str, str]]) -> str:
    head = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"
    return head + "".join("| " + " | ".join(row[c] for c in COLUMNS) + " |\n" for row in rows)


def dataset_card(name: str, as_of: str, made: str, namespace: str, cat: Catalog, images: bool) -> str:
    """README.md of a release: what it holds, its figures, and how to load and grade it."""
    s = CardSummary.of(cat)
    load = "taskfoundry release load ." if images else "taskfoundry release load . --no-images"
    saved = (
        "`docker save` of every task's `:task`, `:task_cleanroom` and (for ProgramBench's evaluator) "
        "`:task_cleanroom_v6` image"
        if images
        else "not in this release: build the tasks on the machine that grades them"
    )
    return (
        f"# {name}\n\n"
        f"A taskfoundry benchmark release: {s.tasks} tasks released (else built) before {as_of}, "
        f"{s.tests} hidden tests. Made {made}.\n\n"
        f"## Figures\n\n"
        f"- by kind: {_counts(s.by_kind)}\n- by language: {_counts(s.by_language)}\n"
        f"- by difficulty: {_counts(s.by_difficulty)}\n"
        f"- line coverage of the hidden tests: {s.coverage.text()}\n"
        f"- mutation score: {s.mutation_score.text()}\n"
        f"- recall tests: {s.recall_text()}\n\n"
        f"## Use\n\n```sh\n"
        f"{load}   # checks every file's sha256, loads the images\n"
        f"taskfoundry tasks .                      # the catalog\n"
        f"taskfoundry eval RUN_DIR --tasks tasks   # grade RUN_DIR/<task id>/submission.tar.gz\n```\n\n"
        f"ProgramBench's evaluator: task directories in `tasks/` (`task.yaml`, `tests.json`), "
        f"blobs with `PROGRAMBENCH_BLOB_DIR=$PWD/tasks` (`<task id>/tests/<branch>.tar.gz`), "
        f"images with `PROGRAMBENCH_DOCKER_ORG={namespace}`.\n\n"
        f"## Files\n\n- `tasks/<task id>/`: the task directories\n"
        f"- `catalog.jsonl`: one task record a line (`taskfoundry.catalog.Catalog.load`)\n"
        f"- `index.json`: tasks with created and release dates\n"
        f"- `images/images.tar`: {saved}\n"
        f"- `release.json`: name, cut-off date, tasks, images, these figures\n"
        f"- `manifest.jsonl`: sha256 and size of every other file\n\n"
        f"## Tasks\n\n{markdown_table(catalog_rows(cat))}"
    )
