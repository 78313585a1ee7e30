"""The mutation analysis config and `reports/mutation.json` (a versioned pydantic model)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

MUTATION_SCHEMA_VERSION = 1

#: killed: some test failed. survived: every test that reaches its line passed.
#: build_failed: it does not compile (not counted). timeout: a run hung or flooded its
#: output (not counted). equivalent: the built program is byte-identical to the
#: reference's once stripped (not counted: no test can tell them apart). error: the
#: analysis itself failed on it (infrastructure, not counted).
Status = Literal["killed", "survived", "build_failed", "timeout", "equivalent", "error"]
STATUSES: tuple[Status, ...] = ("killed", "survived", "build_failed", "timeout", "equivalent", "error")


class Counts(BaseModel):
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    build_failed: int = 0
    timeout: int = 0
    equivalent: int = 0
    error: int = 0

    def add(self, status: Status) -> None:
        self.mutants += 1
        setattr(self, status, getattr(self, status) + 1)

    @property
    def score(self) -> float | None:
        counted = self.killed + self.survived
        return round(self.killed / counted, 4) if counted else None


class Survivor(BaseModel):
    file: str
    line: int
    operator: str
    original: str
    replacement: str


class MutantRecord(Survivor):
    id: str
    status: Status
    killed_by: str | None = Field(None, description="the first test that failed on it")
    tests_run: int = Field(0, description="tests that cover its line, run against it")
    detail: str = ""
    build_seconds: float = 0.0
    test_seconds: float = 0.0
    way: Literal["schema", "rebuild"] | None = Field(
        None, description="schema: switched on in the one schema build; rebuild: built alone"
    )
    checked: bool = Field(
        False, description="a schema survivor rebuilt alone for the equivalence check: not equivalent"
    )
    infecting: int | None = Field(
        None,
        description="of tests_run, those whose runs of the watch build give its expression another "
        "value (only they ran on it); None: not watched, every test ran",
    )


class GuidedSummary(BaseModel):
    """What mutation-guided generation did: the score before it, the tests it added."""

    score_before: float | None = None
    survived_before: int = 0
    generator: str = Field(
        "explorer", description="what wrote the new tests: explorer probes, or the agent given the survivors"
    )
    probes_run: int = Field(0, description="probes of the guided exploration")
    candidates: int = Field(0, description="probes kept because they reach a survivor's line")
    spare_candidates: int = Field(
        0, description="of `candidates`: the generate stage's probes that were run and not kept"
    )
    killers: int = Field(0, description="survivors a candidate probe told apart from the reference")
    tests_added: int = Field(0, description="new tests kept by the linter and the filter")
    tests_dropped: int = 0
    killed: int = Field(0, description="survivors the new tests kill when analysed again")
    seconds: float = 0.0
    explore_seconds: float = Field(0.0, description="of `seconds`: the exploration for candidate probes")
    search_seconds: float = Field(0.0, description="the candidates run on the survivors")
    filter_seconds: float = Field(0.0, description="the new tests linted and filtered")
    analysis_seconds: float = Field(0.0, description="the survivors analysed again")
    error: str | None = Field(None, description="why it stopped, when it could not run")


class MutationReport(BaseModel):
    """reports/mutation.json. score = killed / (killed + survived)."""

    schema_version: int = MUTATION_SCHEMA_VERSION
    mutants: int = Field(0, description="mutants analysed")
    killed: int = 0
    survived: int = 0
    build_failed: int = 0
    timeout: int = 0
    equivalent: int = 0
    error: int = 0
    score: float | None = Field(None, description="killed / (killed + survived); null when neither")
    candidates: int = Field(0, description="mutants on lines the kept suite covers, before sampling")
    budget: int = 0
    seed: int = 0
    files: dict[str, Counts] = Field(default_factory=dict)
    operators: dict[str, Counts] = Field(default_factory=dict)
    survivors: list[Survivor] = Field(default_factory=list)
    records: list[MutantRecord] = Field(default_factory=list)
    unreliable_tests: list[str] = Field(
        default_factory=list, description="kept tests that failed on the rebuilt reference here: not used"
    )
    equivalence_checked: int = Field(
        0, description="survivors of the schema build rebuilt alone for the equivalence check"
    )
    exhausted: str | None = Field(None, description="'time' when the budget ended the analysis early")
    skipped: str | None = Field(None, description="why no analysis ran (disabled, no tests, no language)")
    guided: GuidedSummary | None = Field(
        None, description="mutation-guided generation; `score` is then the score after it"
    )
    seconds: float = 0.0

    @classmethod
    def from_records(cls, records: list[MutantRecord], **fields: object) -> MutationReport:
        total = Counts()
        files: dict[str, Counts] = {}
        operators: dict[str, Counts] = {}
        for rec in records:
            total.add(rec.status)
            files.setdefault(rec.file, Counts()).add(rec.status)
            operators.setdefault(rec.operator, Counts()).add(rec.status)
        survivors = [
            Survivor(**r.model_dump(include=set(Survivor.model_fields)))
            for r in records
            if r.status == "survived"
        ]
        return cls(
            **total.model_dump(),
            score=total.score,
            files=dict(sorted(files.items())),
            operators=dict(sorted(operators.items())),
            survivors=survivors,
            records=records,
            equivalence_checked=sum(
                r.checked or (r.way == "schema" and r.status == "equivalent") for r in records
            ),
            **fields,  # type: ignore[arg-type]
        )
