"""task.yaml of a feature task: the common fields, then the feature kind's own."""

from __future__ import annotations

from pydantic import Field

from taskfoundry.kinds.feature.results import InterfaceObject
from taskfoundry.models import TaskYaml


class FeatureTaskYaml(TaskYaml):
    """A TaskYaml (so every reader of task.yaml loads it) with `kind: feature` and the feature."""

    kind: str = "feature"
    level: int = Field(description="1: the stripped repository is given; 2: only the interface")
    feature: str = Field(description="the feature's name, from its F2P test file")
    f2p: list[str] = Field(
        description="fail-to-pass tests (JUnit ids): fail stripped, pass with the reference"
    )
    p2p: list[str] = Field(description="pass-to-pass tests (JUnit ids): pass on both")
    f2p_files: list[str]
    p2p_files: list[str]
    removed_lines: int
    interface: list[InterfaceObject]
    test_command: str = Field(description="run from the workspace root by the grader")
    test_timeout: float = Field(description="seconds one test may run")
    return_types: dict[str, dict[str, list[str]]] = Field(
        default_factory=dict,
        description="F2P test -> tested function -> the exact types the reference returned there",
    )
    return_values: dict[str, list[str]] = Field(
        default_factory=dict,
        description="F2P test -> digests of what the reference returned there (to the test's code, "
        "else anywhere): its run must show every one, or the test fails however it reports",
    )
    values_direct: list[str] = Field(
        default_factory=list,
        description="F2P tests whose return_values are what reached the test's own code: its run "
        "must hand that code exactly these, no more (a run cannot claim every guess)",
    )
