"""generate of the function kind (stages 5-6): inputs from hypothesis, outcomes from the
reference, run in the sandbox image with a timeout per call and per function."""

from __future__ import annotations

import json
import time
from typing import Any

import docker

from taskfoundry.kinds.function.results import Candidate, Case, CasesStage, Explored, FunctionsStage
from taskfoundry.kinds.function.runner import run_functions
from taskfoundry.kinds.function.settings import CasesSettings
from taskfoundry.pipeline.results import BuildStage, SourceResult


def spec_of(c: Candidate) -> dict[str, Any]:
    """What fn_runner.py reads of a candidate (spec.json)."""
    return {
        "name": c.name,
        "npos": c.npos,
        "params": [p.model_dump() for p in c.params],
        "raises": c.raises,
        "body_first": c.body_first,
        "last": c.last,
    }


def explored(c: Candidate, result: dict[str, Any]) -> Explored:
    if "drop" in result:
        return Explored(qualname=c.record.qualname, drop=result["drop"], drop_detail=result.get("detail", ""))
    cases = [Case.model_validate(x) for x in result["cases"]]
    ex = Explored(
        qualname=c.record.qualname,
        cases=cases,
        counts=result["counts"],
        branches=tuple(result["branches"]),
        lines=tuple(result["lines"]),
        seconds=result["seconds"],
    )
    if not cases:
        ex.drop, ex.drop_detail = "no_cases", f"no input gave a usable outcome ({result['counts']})"
    return ex


def cases_stage(
    src: SourceResult,
    build: BuildStage | None,
    start: FunctionsStage,
    settings: CasesSettings,
    client: docker.DockerClient,
) -> CasesStage:
    started = time.monotonic()
    by_id = {f"f{i:04d}": c for i, c in enumerate(start.candidates)}
    items = [(i, {"spec.json": json.dumps(spec_of(c)), "candidate.py": c.module}) for i, c in by_id.items()]
    found: dict[str, Explored] = {}

    def read(ident: str, result: dict[str, Any]) -> None:
        found[ident] = explored(by_id[ident], result)

    cpu = run_functions(start.image, "explore", items, settings.function, client, read)
    return CasesStage(
        image=start.image,
        functions=[found[i] for i in by_id],
        seconds=round(time.monotonic() - started, 2),
        cpu_seconds=round(cpu, 2),
    )
