"""validate of the function kind (stage 7, the gate), in the sandbox: the cases run again on
the reference under coverage.py (branch mode) twice, with another hash seed than when they
were made (cases whose outcome changes are dropped as nondeterministic); what is left must
reach every branch and line of the function; each trivial body must fail some case and at
least one mutant must (when the function has mutation sites)."""

from __future__ import annotations

import json
import time
from typing import Any

import docker

from taskfoundry.kinds.function.cases import spec_of
from taskfoundry.kinds.function.mutate import mutants, trivial
from taskfoundry.kinds.function.results import (
    Candidate,
    CasesStage,
    Explored,
    FunctionsStage,
    GateStage,
    ReviewStage,
    Verdict,
)
from taskfoundry.kinds.function.runner import run_functions
from taskfoundry.kinds.function.settings import GateSettings


def verdict(c: Candidate, ex: Explored, result: dict[str, Any]) -> Verdict:
    name = c.record.qualname
    if "drop" in result:
        return Verdict(
            qualname=name, accepted=False, drop=result["drop"], drop_detail=result.get("detail", "")
        )
    failed: dict[str, int] = result["variants_failed"]
    trivial_failed = {k: v for k, v in failed.items() if k.startswith("trivial_")}
    mutant_failed = {k: v for k, v in failed.items() if k.startswith("mutant")}
    v = Verdict(
        qualname=name,
        accepted=False,
        cases=[ex.cases[i] for i in result["kept"]],
        branches=tuple(result["branches"]),
        lines=tuple(result["lines"]),
        unstable=result["unstable"],
        trivial_failed=trivial_failed,
        mutants=len(mutant_failed),
        mutants_killed=sum(1 for n in mutant_failed.values() if n),
        light=result.get("light", []),
    )
    if v.unstable or not v.cases:  # one changing outcome: the stable ones may be luck
        v.drop, v.drop_detail = "nondeterministic", f"{v.unstable} cases changed between runs"
    elif v.branches[0] < v.branches[1] or v.lines[0] < v.lines[1]:
        v.drop = "coverage"
        v.drop_detail = f"branches {v.branches}, lines {v.lines}; missing arcs {result['missing_arcs'][:10]}"
    elif passed := [k for k, n in trivial_failed.items() if n == 0]:
        v.drop, v.drop_detail = "trivial_pass", f"the cases pass {', '.join(passed)}"
    elif v.mutants and not v.mutants_killed:
        v.drop, v.drop_detail = "mutants_survive", f"none of {v.mutants} mutants fails a case"
    else:
        v.accepted = True
    return v


def gate_stage(
    suite: CasesStage,
    review: ReviewStage,
    start: FunctionsStage,
    settings: GateSettings,
    client: docker.DockerClient,
) -> GateStage:
    started = time.monotonic()
    cfg = settings.function
    candidates = {c.record.qualname: c for c in start.candidates}
    explored = {e.qualname: e for e in suite.functions if e.qualname not in review.dropped}
    by_id = {f"f{i:04d}": name for i, name in enumerate(explored)}
    items = []
    for ident, name in by_id.items():
        c, ex = candidates[name], explored[name]
        first = c.params[0].name if c.params else None
        variants = trivial(c.module, c.name, first) | mutants(c.module, c.name, cfg.mutants)
        spec = spec_of(c) | {"variants": variants}
        cases = [case.model_dump(mode="json") for case in ex.cases[: cfg.max_cases]]
        files = {"spec.json": json.dumps(spec), "candidate.py": c.module, "cases.json": json.dumps(cases)}
        items.append((ident, files))
    verdicts: dict[str, Verdict] = {}

    def read(ident: str, result: dict[str, Any]) -> None:
        name = by_id[ident]
        verdicts[name] = verdict(candidates[name], explored[name], result)

    cpu = run_functions(start.image, "gate", items, cfg, client, read)
    return GateStage(
        verdicts=[verdicts[n] for n in by_id.values()],
        seconds=round(time.monotonic() - started, 2),
        cpu_seconds=round(cpu, 2),
    )
