"""package of the function kind: one task directory per accepted function, and the yield of
every stage for the whole source (in each task's reports/ and in <out>/reports/<source id>/,
so a source with no accepted function still leaves its table)."""

from __future__ import annotations

import io
import json
import logging
import tarfile
from pathlib import Path
from typing import Any, Literal

import docker

from taskfoundry import atomic
from taskfoundry.assets import asset
from taskfoundry.kinds.function.env import PYTHON
from taskfoundry.kinds.function.report import yield_table
from taskfoundry.kinds.function.results import (
    Candidate,
    CasesStage,
    FunctionsStage,
    GateStage,
    ReviewStage,
    Verdict,
)
from taskfoundry.kinds.function.settings import PackageSettings
from taskfoundry.kinds.function.taskfile import FunctionTaskYaml
from taskfoundry.models import Branch, Images, TaskStats, TestsJson, branch_key, save_json, save_yaml
from taskfoundry.naming import function_task_id, junit_name, tasks_dir
from taskfoundry.pipeline.provenance import StageTimes, provenance
from taskfoundry.pipeline.results import BuildStage, SourceResult

log = logging.getLogger(__name__)
BRANCH = "function-cases"
TEST_FILE = "test_cases.py"
MODULE = "candidate.py"


def case_ids(n: int) -> list[str]:
    return [junit_name(TEST_FILE, f"test_case[c{i:03d}]") for i in range(n)]


def difficulty(complexity: int) -> Literal["easy", "medium", "hard"]:
    return "easy" if complexity <= 3 else "medium" if complexity <= 6 else "hard"


def prompt(c: Candidate) -> str:
    """The signature and docstring with the body removed, and the module context above it."""
    doc = c.record.docstring.replace('"""', '\\"\\"\\"')
    indented = "\n".join(("    " + line) if line else "" for line in doc.splitlines())
    stub = f'{c.record.signature}\n    """\n{indented}\n    """\n    ...\n'
    context = f"```python\n{c.header}\n```\n\n" if c.header else ""
    return (
        f"# Implement `{c.name}`\n\nWrite `{MODULE}`: a Python module that defines `{c.name}` as "
        "documented below. Only the standard library"
        + (f" and {', '.join(c.record.libraries)}" if c.record.libraries else "")
        + " can be imported. Hidden cases call it with many inputs and compare what it returns "
        "(floats within 1e-6) or which exception it raises.\n\n"
        + (f"The original module defines this before the function:\n\n{context}" if context else "")
        + f"```python\n{stub}```\n"
    )


def _tar(files: dict[str, bytes | str], modes: dict[str, int] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in sorted(files.items()):
            raw = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(raw), (modes or {}).get(name, 0o644)
            tar.addfile(info, io.BytesIO(raw))
    return buf.getvalue()


def suite_tarball(c: Candidate, v: Verdict, call_timeout: float) -> bytes:
    cases = [case.model_dump(mode="json") for case in v.cases]
    spec = {
        "name": c.name,
        "npos": c.npos,
        "python": PYTHON,
        "call_timeout": call_timeout,
        "timeout": min(30 + call_timeout * len(cases), 600),
    }
    files: dict[str, bytes | str] = {
        "eval/run.sh": asset("grading/run.sh"),
        f"eval/tests/{TEST_FILE}": asset("function/fn_test.py"),
        "eval/tests/cases.json": json.dumps(cases),
        "eval/tests/function.json": json.dumps(spec),
    }
    for helper in ("function/fcall.py", "function/fcodec.py", "grading/tfrun.py"):
        files[f"eval/tests/{helper.partition('/')[2]}"] = asset(helper)
    return _tar(files, {"eval/run.sh": 0o755})


def package_stage(
    src: SourceResult,
    build: BuildStage | None,
    start: FunctionsStage,
    suite: CasesStage,
    review: ReviewStage,
    gate: GateStage,
    settings: PackageSettings,
    client: docker.DockerClient,
    times: StageTimes,
) -> list[Path]:
    table = yield_table(start, suite, review, gate)
    functions = [r.model_dump(mode="json") for r in start.records]
    later = {e.qualname: ("cases", e.drop, e.drop_detail) for e in suite.functions if e.drop}
    later |= {n: ("review", r, "") for n, r in review.dropped.items() if n not in later}
    later |= {v.qualname: ("gate", v.drop, v.drop_detail) for v in gate.verdicts if v.drop}
    for record in functions:  # the stage that dropped a function after the static ones
        if record["qualname"] in later:
            record["stage"], record["drop"], record["drop_detail"] = later[record["qualname"]]
    source_reports = settings.out / "reports" / src.task_id
    cost = {
        "stage_seconds": {k: round(s, 2) for k, s in times.seconds.items()},
        "reused_stages": sorted(times.reused),
        "sandbox_cpu_seconds": {"cases": suite.cpu_seconds, "gate": gate.cpu_seconds},
    }
    atomic.write_json(source_reports / "yield.json", table.model_dump(mode="json") | cost)
    atomic.write_json(source_reports / "functions.json", functions)
    candidates = {c.record.qualname: c for c in start.candidates}
    dirs = []
    for v in gate.verdicts:
        if v.accepted:
            reports: dict[str, Any] = {
                "yield.json": table.model_dump(mode="json"),
                "functions.json": functions,
                "secret.json": {"hypothesis_seed": settings.function.seed},
            }
            dirs.append(_task(src, candidates[v.qualname], v, start.image, settings, times, reports))
    log.info("%s: %d function tasks", src.task_id, len(dirs))
    return dirs


def _task(
    src: SourceResult,
    c: Candidate,
    v: Verdict,
    image: str,
    settings: PackageSettings,
    times: StageTimes,
    reports: dict[str, Any],
) -> Path:
    task_id = function_task_id(src.task_id, c.record.qualname)
    final = tasks_dir(settings.out) / task_id
    made = provenance(final, src.commit, times)
    key = branch_key(BRANCH)
    names = case_ids(len(v.cases))
    task = FunctionTaskYaml(
        repository=f"{src.owner}/{src.repo}",
        commit=src.commit,
        language="python",
        difficulty=difficulty(c.record.complexity),
        eval_clean_hashes=[],
        kind="function",
        task_id=task_id,
        difficulty_score=float(c.record.complexity),
        source=src.source,
        created_at=made.created_at,
        executable=MODULE,
        images=Images(task=image, task_cleanroom=image),
        upstream=src.upstream,
        source_visible=True,
        stats=TaskStats(
            tests_generated=len(v.cases) + v.unstable,
            tests_kept=len(v.cases),
            dropped={"nondeterministic": v.unstable} if v.unstable else {},
            stage_seconds=made.stage_seconds,
            reused_stages=made.reused_stages,
        ),
        function=c.record.qualname,
        name=c.name,
        module_file=c.record.file,
        signature=c.record.signature,
        dep_class=c.record.dep_class or "SC",
        libraries=c.record.libraries,
        allowed_libraries=list(settings.function.allowed_libraries),
        complexity=c.record.complexity,
        branch_rate=round(v.branch_rate, 6),
        mutation_score=round(v.mutants_killed / v.mutants, 4) if v.mutants else None,
    )
    with atomic.staged_dir(final) as tmp:
        save_yaml(tmp / "task.yaml", task)
        save_json(tmp / "tests.json", TestsJson(branches={key: Branch(tests=names)}))
        atomic.write_text(tmp / "prompt.md", prompt(c))
        atomic.write_bytes(
            tmp / "tests" / f"{key}.tar.gz", suite_tarball(c, v, settings.function.call_timeout)
        )
        atomic.write_bytes(tmp / "solution.tar.gz", _tar({MODULE: c.module}))
        for name, data in reports.items():
            atomic.write_json(tmp / "reports" / name, data)
        atomic.write_json(
            tmp / "reports" / "coverage.json",
            {"branch_rate": v.branch_rate, "branches": list(v.branches), "lines": list(v.lines)},
        )
        atomic.write_json(
            tmp / "reports" / "gate.json",
            {
                "cases": len(v.cases),
                "unstable": v.unstable,
                "light_suite": v.light,  # case indexes: a greedy cover keeping full coverage
                "trivial_failed": v.trivial_failed,
                "mutation": {"killed": v.mutants_killed, "mutants": v.mutants},
            },
        )
    return final
