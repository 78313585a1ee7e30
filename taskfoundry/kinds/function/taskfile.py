"""task.yaml of a function task: the common keys plus the function's own."""

from __future__ import annotations

from pydantic import Field

from taskfoundry.models import TaskYaml


class FunctionTaskYaml(TaskYaml):
    function: str = Field(description="the function's qualified name in the source")
    name: str = Field(description="the name the candidate module must define")
    module_file: str = Field(description="the file it comes from, in the source")
    signature: str
    dep_class: str = Field(description="SC (self-contained) or WSC (weakly self-contained)")
    libraries: list[str] = Field(default_factory=list, description="third-party modules it uses")
    allowed_libraries: list[str] = Field(default_factory=list)
    complexity: int
    branch_rate: float = Field(description="branch coverage of the reference by the cases")
    mutation_score: float | None = Field(None, description="mutants killed / mutants tried")
