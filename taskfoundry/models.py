"""Versioned pydantic models for every file a task holds (task.yaml, tests.json, reports)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Literal, TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError

from taskfoundry import atomic
from taskfoundry.errors import ConfigError

SCHEMA_VERSION = 1
M = TypeVar("M", bound=BaseModel)

DropReason = Literal[
    "gold_fail",
    "gold_flaky",
    "slow_or_hang",
    "dummy_pass",
    "lint_high",
    "recall",
    "pinned",
    "reference_fails",
]


def branch_key(name: str) -> str:
    """ProgramBench's branch key: the first 12 hex digits of sha256(branch name)."""
    return hashlib.sha256(name.encode()).hexdigest()[:12]


class Images(BaseModel):
    task: str
    task_cleanroom: str


class TaskStats(BaseModel):
    tests_generated: int = 0
    tests_kept: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    line_rate: float = 0.0
    lines_covered: int = 0
    lines_total: int = 0
    dummy_pass_rate: float = 0.0
    mutation_score: float | None = Field(
        None, description="killed / (killed + survived) of reports/mutation.json; null: not analysed"
    )
    stage_seconds: dict[str, float] = Field(
        default_factory=dict, description="wall seconds per stage, of the run that made each stage's result"
    )
    reused_stages: list[str] = Field(
        default_factory=list, description="stages whose results the build that wrote this took from the cache"
    )
    recall_tests: int = Field(
        0, description="tests that recall a published algorithm's bytes (triage class recall)"
    )
    recall_in_resolve: bool = Field(
        False, description="whether they count towards resolved; false: ignored_tests, reason recall"
    )
    replay_pass_rate: float | None = Field(
        None,
        description="share of the kept tests a lookup table of the gold on public probes passes "
        "(reports/replay.json; null: not run)",
    )
    replay_pass_rate_before: float | None = Field(
        None, description="the same share of the generated tests, before the filter"
    )


class TaskGrade(BaseModel):
    """Whether a task met its build's acceptance gate (the program kind's `accept:` section)."""

    benchmark_grade: bool = Field(description="every bar of the gate met")
    reasons: list[str] = Field(default_factory=list, description="each bar the task missed, with its figure")


class UpstreamInfo(BaseModel):
    """The registry release a task was built from (registry sources only)."""

    registry: str
    name: str
    version: str
    url: str
    sha256: str
    build_depends: list[str] = Field(
        default_factory=list,
        description="Debian packages the registry's own packaging builds it with (Debian sources)",
    )
    programs: list[str] = Field(
        default_factory=list,
        description="its Debian binary packages that ship a program (the name a build looks for)",
    )


GoldIntegrity = Literal["sealed", "instrumentable", "source_visible"]


class TaskYaml(BaseModel):
    """task.yaml: ProgramBench's five keys first, then ours."""

    repository: str
    commit: str
    language: str
    difficulty: Literal["easy", "medium", "hard"]
    eval_clean_hashes: list[str]
    kind: str = Field("program", description="task kind (taskfoundry.kinds); absent in older tasks")
    schema_version: int = SCHEMA_VERSION
    task_id: str
    difficulty_score: float
    source: str
    created_at: datetime
    executable: str
    images: Images
    upstream: UpstreamInfo | None = None
    source_visible: bool = False
    gold_integrity: GoldIntegrity | None = Field(
        None,
        description="sealed: no worker attack got code into or bytes out of the gold "
        "(reports/integrity.json); instrumentable: one did; null: not checked",
    )
    reference_digest: str = Field(
        "",
        description="sha256 over the reference submission's files (solution.tar.gz): the grader "
        "accepts the gold's code from that submission only",
    )
    stats: TaskStats = Field(default_factory=TaskStats)
    grade: TaskGrade | None = Field(
        None,
        description="the acceptance gate's verdict; null: not gated (built before the gate, or a kind "
        "whose stages write only tasks that pass its own gate)",
    )


class TaskHead(BaseModel):
    """What every kind's task.yaml holds, read before the kind's own model: which kind grades it."""

    task_id: str
    kind: str = "program"


class DropRecord(BaseModel):
    id: DropReason
    timestamp: datetime
    detail: str = ""


class IgnoredTest(BaseModel):
    name: str
    reasons: list[DropRecord]


class Branch(BaseModel):
    ignored: bool = False
    ignore_reason: str | None = None
    tests: list[str] = Field(default_factory=list)
    ignored_tests: list[IgnoredTest] = Field(default_factory=list)


class TestsJson(BaseModel):
    __test__ = False  # not a pytest class, despite the name
    branches: dict[str, Branch] = Field(default_factory=dict)

    def counted(self) -> list[str]:
        """Keys of the branches that count (not ignored), in a stable order."""
        return sorted(k for k, b in self.branches.items() if not b.ignored)

    def expected(self) -> dict[str, list[str]]:
        """The tests each counted branch expects to pass."""
        return {k: list(self.branches[k].tests) for k in self.counted()}


class CoverageFile(BaseModel):
    covered: list[int]
    missed: list[int]


class CoverageReport(BaseModel):
    """reports/coverage.json: first-party line coverage, one format for every language."""

    schema_version: int = SCHEMA_VERSION
    line_rate: float
    lines_covered: int
    lines_total: int
    files: dict[str, CoverageFile]

    @classmethod
    def from_lines(cls, covered: dict[str, set[int]], total: dict[str, set[int]]) -> CoverageReport:
        files = {
            name: CoverageFile(
                covered=sorted(covered.get(name, set()) & lines),
                missed=sorted(lines - covered.get(name, set())),
            )
            for name, lines in sorted(total.items())
        }
        n_cov = sum(len(f.covered) for f in files.values())
        n_tot = sum(len(lines) for lines in total.values())
        return cls(
            line_rate=(n_cov / n_tot if n_tot else 0.0), lines_covered=n_cov, lines_total=n_tot, files=files
        )


def error_text(exc: Exception) -> str:
    """One line: a validation error's fields and messages (`a.b: message; ...`), else the error."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors())
    return " ".join(str(exc).split())


def load_yaml_model(path: Path, model: type[M]) -> M:
    """Load a YAML file into `model`, naming the file and field on any error."""
    try:
        data = yaml.safe_load(path.read_text())
        return model.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ConfigError(f"{path}: {error_text(exc)}") from exc


def load_json_model(path: Path, model: type[M]) -> M:
    try:
        return model.model_validate(json.loads(path.read_text()))
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def save_yaml(path: Path, model: BaseModel) -> None:
    atomic.write_yaml(path, model.model_dump(mode="json"))


def save_json(path: Path, model: BaseModel) -> None:
    atomic.write_json(path, model.model_dump(mode="json"))
