"""Suite strength of each example (and any other SOURCE: a path, `debian:PKG`, `crate:NAME`):
kept tests, first-party line coverage, mutation score, explorer and mutation seconds.

    .venv/bin/python benchmarks/strength.py [SOURCE ...] [--budget 200] [--workers 2]
        [--max-probes 600] [--out DIR] [--json FILE] [--modes own,ours,harvested]

Each mode is a row per source. The first mode's sample of mutants (seeded, on lines its suite
covers) is the sample of the others: a mode whose suite reaches none of a mutant's line counts
it as survived ("same mutants" column; the mode's own score is on those it reaches).
  own        the project's own tests as a suite: every call they made of the program
             (testgen.harvest), a test each, judged by exact output; no other probe, no guided step
  ours       the explorer and the guided step without the harvest
  harvested  the default: the harvested calls first, then the explorer and the guided step

Runs the stage functions directly (no Prefect): source, build, cleanroom, generate, lint,
filter, mutation (with mutation-guided generation unless --no-guided). Images are reused
by tag, so only the first run of a source pays for its build. "kept tests" and "line
coverage" are the suite's after guided generation; the mutation columns time the whole
stage (setup, the reference rebuilt and the suite run on it once, every mutant, then the
guided step) and split a mutant's first-analysis time into rebuild and tests.
The stage results are kept as <out>/work/strength/<task id>/<stage>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

from taskfoundry import sections
from taskfoundry.config import Config
from taskfoundry.errors import TaskfoundryError
from taskfoundry.kinds.program.kind import ProgramKind
from taskfoundry.kinds.program.mutate import analyze as analyze_module
from taskfoundry.kinds.program.mutate.models import MutantRecord
from taskfoundry.kinds.program.mutate.select import Planned, candidates, tests_by_line
from taskfoundry.kinds.program.package import origin_table
from taskfoundry.models import save_json
from taskfoundry.pipeline.build import build_stage
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import docker_client

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [str(ROOT / "examples" / name) for name in ("csvq", "rcalc", "logsum")]
HEAD = (
    "| task | mode | lang | harvest | kept tests (harvested; recall, out) | line coverage | "
    "same mutants | score | "
    "after guided (+tests) | killed / survived / timeout / build failed / equivalent (after) | "
    "explorer s | mutation s (guided s) | "
    "mean rebuild s | mean tests s | load | survivors' causes |"
)


MODES = ("harvested", "ours", "own")


@contextlib.contextmanager
def same_mutants(ids: set[str] | None) -> Iterator[None]:
    """The analysis plans exactly the mutants `ids` that the suite reaches (None: as it would)."""
    if ids is None:
        yield
        return

    def plan(
        repo: Path, kept: list[str], per_test_lines: Any, operators: tuple[str, ...], budget: int, seed: int
    ) -> tuple[list[Planned], int]:
        by_line = tests_by_line(kept, per_test_lines)
        chosen = [m for m in candidates(repo, by_line, operators) if m.id in ids]
        chosen.sort(key=lambda m: (m.file, m.start, m.end, m.replacement))
        return [Planned(m, tuple(by_line[m.file][m.line])) for m in chosen], len(ids)

    with mock.patch.object(analyze_module, "plan", plan):
        yield


def same_score(records: list[MutantRecord], ids: set[str]) -> float | None:
    """killed / (killed + survived + unreached) over `ids`: an unreached mutant survives."""
    by_id = {r.id: r for r in records}
    killed = sum(by_id[i].status == "killed" for i in ids if i in by_id)
    survived = sum(by_id[i].status == "survived" for i in ids if i in by_id)
    unreached = sum(i not in by_id for i in ids)
    total = killed + survived + unreached
    return killed / total if total else None


def mode_config(config: Config, mode: str) -> Config:
    """`config` set up for one mode (see the module's docstring)."""
    new = config.model_copy(deep=True)
    new.explorer.harvest.enabled = mode != "ours"
    new.explorer.harvest.only = mode == "own"
    if mode == "own":
        new.mutation.guided = False
    return new


def measure(
    source: str, config: Config, mode: str = "harvested", ids: set[str] | None = None
) -> dict[str, Any]:
    client, kind = docker_client(), ProgramKind()
    src = source_stage(source, config.sources, config.work_dir)
    build = build_stage(src, sections.for_build(config), client)
    clean = kind.start_state(src, build, sections.for_cleanroom(config), client)
    gen = kind.generate(src, build, clean, sections.for_generate(config), client)
    stored = config.work_dir / "strength" / src.task_id / mode
    save_json(stored / "generate.json", gen)  # readable before the slow stages end
    print(
        f"# {src.task_id}: explorer {gen.generated} tests, {gen.coverage.line_rate:.1%} lines, "
        f"{gen.probes_run} probes ({gen.exhausted}), {gen.explorer_seconds:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    lint = kind.review(gen)
    filt = kind.validate(gen, lint, clean, sections.for_filter(config), client)
    start = time.monotonic()
    with same_mutants(ids):
        suite, verdict = kind.strengthen(
            src, build, clean, gen, lint, filt, sections.for_mutate(config), client
        )
    seconds = time.monotonic() - start
    report = verdict.mutation
    if report is None:
        raise TaskfoundryError(f"{src.task_id}: the mutation stage wrote no report")
    guided = report.guided
    for name, model in (
        ("source", src),
        ("build", build),
        ("generate", gen),
        ("filter", filt),
        ("suite", suite),
        ("mutation", verdict),
    ):
        save_json(stored / f"{name}.json", model)
    built = [r for r in report.records if r.status != "build_failed"]
    origins = {k: v.model_dump() for k, v in origin_table(suite, verdict).items()}
    harvest = gen.harvest
    return {
        "task": src.task_id,
        "mode": mode,
        "harvest": f"{harvest.status} ({harvest.calls} calls, {harvest.seconds:.0f} s)" if harvest else "-",
        "origins": origins,
        "causes": survivor_causes(report.records),
        "recall": len(verdict.recall),
        "ids": sorted(r.id for r in report.records),
        "same_score": same_score(report.records, ids) if ids is not None else report.score,
        "harvested_kept": origins.get("harvested", {}).get("tests_kept", 0),
        "harvested_kills": origins.get("harvested", {}).get("kills", 0),
        "language": build.recipe.language,
        "kept": len(verdict.kept),
        "line_rate": verdict.coverage.line_rate,
        "score_before": guided.score_before if guided else report.score,
        "score": report.score,
        "tests_added": guided.tests_added if guided else 0,
        "guided_seconds": guided.seconds if guided else 0.0,
        "counts": [report.killed, report.survived, report.timeout, report.build_failed, report.equivalent],
        "mutants": report.mutants,
        "candidates": report.candidates,
        "skipped": report.skipped,
        "explorer_seconds": gen.explorer_seconds,
        "probes": gen.probes_run,
        "explorer_line_rate": gen.coverage.line_rate,
        "mutation_seconds": seconds,
        "rebuild_mean": statistics.mean(r.build_seconds for r in report.records) if report.records else 0.0,
        "tests_mean": statistics.mean(r.test_seconds for r in built) if built else 0.0,
        "load": os.getloadavg()[0],
    }


_CLEANUP = re.compile(r"\b(free|fclose|close|munmap|\w+_free|drop)\s*\(")


def survivor_causes(records: list[MutantRecord]) -> dict[str, int]:
    """Why the survivors survive, as far as the records tell: a release removed (free, close:
    nothing a test can observe), an input space barely tried (two tests or fewer reach the
    line), or many tests reach it and none tells (an equivalent mutant, or a value no input
    gave)."""
    found: dict[str, int] = {}
    for r in records:
        if r.status != "survived":
            continue
        if r.operator == "statement" and _CLEANUP.search(r.original):
            cause = "cleanup"
        elif r.tests_run <= 2:
            cause = "few inputs"
        else:
            cause = "many inputs, none tells"
        found[cause] = found.get(cause, 0) + 1
    return found


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def row(m: dict[str, Any]) -> str:
    before = f"skipped: {m['skipped'][:60]}" if m["skipped"] else _pct(m["score_before"])
    counts = " / ".join(str(c) for c in m["counts"])
    return (
        f"| {m['task']} | {m['mode']} | {m['language']} | {m['harvest']} | {m['kept']} "
        f"({m['harvested_kept']}; recall {m['recall']}) | {m['line_rate']:.1%} | "
        f"{_pct(m['same_score'])} | {before} | "
        f"{_pct(m['score'])} (+{m['tests_added']}) | {counts} (of {m['mutants']}; {m['candidates']} "
        f"candidates) | {m['explorer_seconds']:.0f} | {m['mutation_seconds']:.0f} "
        f"({m['guided_seconds']:.0f}) | {m['rebuild_mean']:.2f} | {m['tests_mean']:.2f} | {m['load']:.1f} | "
        f"{', '.join(f'{k} {v}' for k, v in m['causes'].items()) or '-'} |"
    )


def _earlier_ids(earlier: list[dict[str, Any]], source: str) -> set[str] | None:
    """The mutants of the first row an earlier run measured for `source` (matched by its
    task id's name part: `debian:figlet` -> `debian__figlet.<commit>`)."""
    key = source.replace(":", "__").rstrip("/").rsplit("/", 1)[-1]
    for row in earlier:
        if row["task"].split(".")[0].endswith(key):
            return set(row["ids"])
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sources", nargs="*", default=DEFAULT)
    parser.add_argument("--budget", type=int, default=200, help="mutants per program")
    parser.add_argument("--workers", type=int, default=2, help="mutation containers at once")
    parser.add_argument("--max-probes", type=int, default=600)
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-strength"))
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--guided", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES))
    parser.add_argument(
        "--same-as", type=Path, default=None, help="an earlier --json: every mode on its mutants, by task"
    )
    args = parser.parse_args()
    config = Config(out=args.out)
    config.explorer.max_probes = args.max_probes
    config.mutation.budget = args.budget
    config.mutation.workers = args.workers
    config.mutation.guided = args.guided
    print(HEAD)
    print("|" + "---|" * HEAD.count(" | ") + "---|")
    results = []
    earlier = json.loads(args.same_as.read_text()) if args.same_as else []
    for source in args.sources:
        ids: set[str] | None = _earlier_ids(earlier, source)
        for mode in args.modes.split(","):
            try:
                results.append(measure(source, mode_config(config, mode), mode, ids))
                print(row(results[-1]), flush=True)
                ids = set(results[-1]["ids"]) if ids is None else ids
            except TaskfoundryError as exc:
                print(f"| {source} | {mode} | failed: {exc} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
