"""What the function kind's stages hand each other: plain pydantic models, persisted by Prefect."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from taskfoundry.pipeline.results import Outside

DepClass = Literal["SC", "WSC"]


class Param(BaseModel):
    name: str
    annotation: str | None = None
    guess: str | None = Field(None, description="a type read off the default or the comparisons")
    literals: list[Any] = Field(default_factory=list, description="encoded literals it is compared with")


class FunctionRecord(BaseModel):
    """One function of the repository: where it is, what it needs, whether it can be a task."""

    qualname: str
    file: str
    lineno: int
    signature: str
    docstring: str = ""
    complexity: int = 0
    dep_class: DepClass | None = None
    libraries: list[str] = Field(default_factory=list, description="third-party modules it uses (WSC)")
    drop: str | None = Field(None, description="why it is no task (the stage's reason), None: kept")
    drop_detail: str = ""


class Candidate(BaseModel):
    """A function that passed the static stages, as a standalone module."""

    record: FunctionRecord
    module: str  # candidate.py: imports, literal constants, the function
    header: str  # the module's lines above the function (imports, constants), for the prompt
    params: list[Param]
    npos: int  # parameters passed by position
    raises: list[str]  # exception classes the function raises itself
    body_first: int  # first line of the body in `module`
    last: int  # last line of the function in `module`

    @property
    def name(self) -> str:
        return self.record.qualname.rsplit(".", 1)[-1]


class Yield(BaseModel):
    """Functions left after each stage (Code2Bench's yield table)."""

    candidates: int = 0
    dependencies: int = 0
    sc: int = 0
    wsc: int = 0
    testable: int = 0
    explored: int = 0
    accepted: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)


class FunctionsStage(BaseModel):
    """start_state: the functions found, the candidates, and the sandbox image."""

    image: str
    built: bool
    records: list[FunctionRecord]
    candidates: list[Candidate]
    libraries: list[str]

    def outside(self) -> Outside:
        return Outside(images=(self.image,))


class Case(BaseModel):
    inputs: dict[str, Any]
    expected: dict[str, Any]  # {"return": encoded} or {"raises": class name}


class Explored(BaseModel):
    qualname: str
    cases: list[Case] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    branches: tuple[int, int] = (0, 0)
    lines: tuple[int, int] = (0, 0)
    seconds: float = 0.0
    drop: str | None = None
    drop_detail: str = ""


class CasesStage(BaseModel):
    """generate: the cases of every candidate, from the reference run in the sandbox."""

    image: str
    functions: list[Explored]
    seconds: float
    cpu_seconds: float = Field(0.0, description="CPU of the reference's processes in the sandbox")

    def outside(self) -> Outside:
        return Outside(images=(self.image,))


class ReviewStage(BaseModel):
    """review: what the static checks of the cases dropped (qualname -> reason)."""

    dropped: dict[str, str] = Field(default_factory=dict)
    capped: dict[str, int] = Field(default_factory=dict, description="cases cut to the cap")


class Verdict(BaseModel):
    qualname: str
    accepted: bool
    cases: list[Case] = Field(default_factory=list, description="the kept cases")
    light: list[int] = Field(default_factory=list, description="kept cases: a greedy cover keeping coverage")
    branches: tuple[int, int] = (0, 0)
    lines: tuple[int, int] = (0, 0)
    unstable: int = 0
    trivial_failed: dict[str, int] = Field(default_factory=dict)
    mutants_killed: int = 0
    mutants: int = 0
    drop: str | None = None
    drop_detail: str = ""

    @property
    def branch_rate(self) -> float:
        hit, total = self.branches
        return hit / total if total else 1.0


class GateStage(BaseModel):
    """validate: the verdict on every function that reached the gate."""

    verdicts: list[Verdict]
    seconds: float
    cpu_seconds: float = Field(0.0, description="CPU of the gate's processes in the sandbox")
