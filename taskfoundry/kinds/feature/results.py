"""What the feature kind's stages hand to each other (pydantic, so Prefect can persist them)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry.kinds.feature.settings import FeatureConfig
from taskfoundry.pipeline.results import Outside


class TestCase(BaseModel):
    __test__ = False  # not a pytest class, despite the name
    junit: str  # JUnit `classname.name`, what tests.json and the grader use
    file: str  # the test file, relative to the repository root
    status: str  # passed / failure / error / skipped


class EnvStage(BaseModel):
    """The environment: an image with the test dependencies, and one run of the repository's tests."""

    image: str  # base + a venv with the project's build, runtime and test requirements
    built: bool
    repo: Path  # the pinned checkout
    project: str
    requirements: list[str]
    tests: list[TestCase]
    passing_files: list[str]  # every test of the file passed (skips allowed, not all skipped)
    failing_files: dict[str, str]  # file -> why it is left out
    notes: list[str] = Field(default_factory=list)

    def outside(self) -> Outside:
        return Outside(images=(self.image,), dirs=(self.repo,))


class InterfaceObject(BaseModel):
    """A removed object the worker must write again: where it is and what it promises."""

    name: str  # qualified name in its module: `slugify`, `TextStats.top_words`
    module: str  # dotted module path: `featlib.slug`
    file: str  # relative path of the module
    kind: str  # function / method / class
    signature: str
    docstring: str = ""
    top: bool = True  # a tested object of the F2P file (False: a callee it reached)


class Candidate(BaseModel):
    """One F2P test file and what stripping its feature takes."""

    name: str  # short name (from the test file), unique within the source
    f2p_file: str
    p2p_files: list[str]
    objects: list[str] = Field(default_factory=list)  # tested top-level objects, `module:qualname`
    interface: list[InterfaceObject] = Field(default_factory=list)
    stripped: dict[str, str] = Field(default_factory=dict)  # relative path -> stripped text
    removed_lines: int = 0
    capped: bool = False
    dropped: str | None = None  # reason, when the candidate goes no further
    detail: str = ""


class CandidatesStage(BaseModel):
    """F2P candidates, traced and extracted (the generate part)."""

    env: EnvStage
    traced_tests: int
    candidates: list[Candidate]
    config: FeatureConfig  # the thresholds, for the review (which gets no settings of its own)


class ReviewStage(BaseModel):
    """Static gates before anything runs: the removed lines, the F2P file's test count."""

    kept: list[str]  # candidate names
    dropped: dict[str, str]  # name -> reason


class ValidatedTask(BaseModel):
    candidate: Candidate
    f2p: list[str]  # JUnit ids: fail on the stripped repository, pass with the reference
    p2p: list[str]  # JUnit ids: pass on both
    # F2P test -> tested function -> the exact types the reference returned there
    return_types: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    # F2P test -> what grading must observe its run return (assets/feature_types.py: evidence)
    return_values: dict[str, list[str]] = Field(default_factory=dict)
    values_direct: list[str] = Field(default_factory=list)  # F2P tests whose values reached their code
    # pytest node ids the grader would refuse with the reference (validate.py): not run
    deselected: list[str] = Field(default_factory=list)


class VerdictStage(BaseModel):
    tasks: list[ValidatedTask]
    dropped: dict[str, str]  # candidate name -> reason
