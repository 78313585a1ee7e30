"""Yield: how many real programs, chosen by a stated rule, become accepted tasks, and at what cost.

    .venv/bin/python benchmarks/yield.py (--catalog FILE | SOURCE ...) [--limit N]
        [--mutants 100] [--out /tmp/tf-bench-yield] [--results DIR] [--until HH:MM]
        [--rule TEXT] [--json FILE] [--config FILE] [--report-only]

`benchmarks/yield_sources.yaml` is a catalog benchmarks/discover.py wrote by a rule (its header
says which); its Debian sources need a config with `sources.debian.suite: sid`: the runs use
`benchmarks/yield_sid.yaml`, and `benchmarks/yield_sid_base.yaml` (a sid base) for a sid source
whose Build-Depends trixie cannot meet. Each result records its base's suite.

The sources are a refresh catalog (`taskfoundry discover` writes one: the rule is then "the
first N candidates of the program kind per registry, in the catalog's order") or SOURCEs on
the command line. Each is built by the real command, `taskfoundry build-many SOURCE`, in a
process of its own with a time limit (`--source-minutes`: a source still building then is
stopped, its containers removed, and it fails in the stage it was in), so a failure is a row
with its stage and message and one bad source never stops the rest. Right after its build a
source's task is graded and its result (row, grades, verdict, its own wall and machine CPU
seconds) is written to `--results DIR/<source>.json`: a re-run, on this machine or a new one,
skips every source with a result there and builds the rest, so a yield run longer than a
session is done in parts (commit the folder between them; `--until` stops before a new source
would start after that time). `--report-only` prints the table of what is there. The report:

- per stage, how many sources got past it (a failure's stage ends its run);
- why the others stopped, grouped (stage and the message with its numbers and paths blanked);
- accepted: built, benchmark-grade by the build's own acceptance gate (task.yaml's `grade`: the
  `accept:` section of `--config`, its defaults 60% line coverage, 60% mutation score, 50 kept
  tests, a replay pass rate of at most 10%), a clean cleanroom (reports/leak.json), and, graded
  here by `taskfoundry eval`, the reference submission (solution.tar.gz) at 1.0 and each dummy
  (a submission whose executable exits 0 silently, exits 1, echoes its arguments, copies its
  input, prints a usage text) at 0;
- CPU-minutes per accepted task: the machine's CPU time (/proc/stat, every process and
  container) over each source's build and grading, summed, divided by the accepted count; run
  it on an otherwise idle machine;
- the accepted tasks' line coverage and mutation score.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from taskfoundry.atomic import write_json
from taskfoundry.config import load_config
from taskfoundry.flows.catalog import load_catalog
from taskfoundry.flows.summary import RunRow, RunSummary
from taskfoundry.kinds.program.filter.dummies import render_dummy
from taskfoundry.models import TaskYaml, load_yaml_model
from taskfoundry.sandbox.docker import RUN_LABEL_ENV, docker_client
from taskfoundry.sandbox.local import stop_group

Figures = dict[str, Any]
STAGES = ["source", "build", "cleanroom", "generate", "lint", "filter", "mutation", "package"]
BIN = Path(sys.executable).parent
DUMMIES = ("silent", "fail", "echo", "cat", "usage")  # graded as submissions: each must score 0


def cpu_seconds() -> float:
    """The machine's busy CPU time so far (user, nice, system, irq, softirq, steal), seconds."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def build_one(source: str, out: Path, argv_tail: list[str], minutes: float, n: int) -> RunRow:
    """`taskfoundry build-many SOURCE` in its own process group, at most `minutes`: its row,
    or on the time limit a failed row at the stage it was in (its containers removed)."""
    runs = out / "runs"
    before = set(runs.glob("build-many-*.json")) if runs.is_dir() else set()
    label = f"yield-{os.getpid()}-{n}"
    argv = [str(BIN / "taskfoundry"), "build-many", source, "--out", str(out), *argv_tail]
    env = {**os.environ, RUN_LABEL_ENV: label}
    start = time.monotonic()
    with (out / "build-many.log").open("ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            proc.wait(timeout=minutes * 60)
        except subprocess.TimeoutExpired:
            stop_group(proc, signal.SIGINT, grace=60)
            remove_containers(label)
            return timed_out(source, out, minutes, time.monotonic() - start)
        except BaseException:  # the benchmark itself stopped: its source's build stops too
            stop_group(proc, signal.SIGINT, grace=30)
            remove_containers(label)
            raise
    written = sorted(set(runs.glob("build-many-*.json")) - before)
    if not written:
        error = f"build-many exited {proc.returncode} and wrote no summary"
        return RunRow(source=source, status="failed", error=error)
    return RunSummary.model_validate_json(written[-1].read_text()).rows[0]


def remove_containers(label: str) -> None:
    client = docker_client()
    for container in client.containers.list(all=True, filters={"label": f"taskfoundry.run={label}"}):
        container.remove(force=True)


def _last_log(out: Path) -> str:
    logs = sorted((out / "work" / "logs").glob("build-many-*.log"), key=lambda p: p.stat().st_mtime)
    return logs[-1].read_text(errors="replace") if logs else ""


def stage_seconds(out: Path, source: str) -> dict[str, float]:
    """Each stage's seconds in the source's last build-many log (where an over-time source's
    time went)."""
    done = re.findall(rf"{re.escape(source)}: stage (\w+) done in ([\d.]+)s", _last_log(out))
    return {stage: float(seconds) for stage, seconds in done}


def timed_out(source: str, out: Path, minutes: float, seconds: float) -> RunRow:
    """The row of a source stopped at the time limit: failed in the stage after its last done."""
    done = re.findall(rf"{re.escape(source)}: stage (\w+) done", _last_log(out))
    last = STAGES.index(done[-1]) + 1 if done and done[-1] in STAGES else 0
    stage = STAGES[min(last, len(STAGES) - 1)]
    error = f"over the time limit of {minutes:g} min (in stage {stage})"
    return RunRow(source=source, status="failed", stage=stage, error=error, seconds=round(seconds, 1))


def slug(source: str) -> str:
    return re.sub(r"[^\w.@=+-]", "_", source)


def run_source(source: str, out: Path, args: argparse.Namespace, n: int) -> Figures:
    """Build one source, grade its task, and say whether it is accepted: its result."""
    tail = ["--concurrency", "1", "--max-failures", "1.0", "--mutants", str(args.mutants), "--no-progress"]
    tail += ["--config", str(args.config)] if args.config else []
    cpu, wall = cpu_seconds(), time.monotonic()
    row = build_one(source, out, tail, args.source_minutes, n)
    result: Figures = {"source": source, "row": row.model_dump(mode="json"), "why": None, "task": None}
    result["limit_minutes"] = args.source_minutes
    result["base_suite"] = load_config(args.config).base.suite  # the Debian suite it was built on
    result["detail"] = first_error(row.log) if row.status != "built" and row.log else None
    result["stage_seconds"] = stage_seconds(out, source)
    if row.status == "built" and row.task_dir:
        grades = {who: graded(row.task_dir, out, who) for who in ("reference", *DUMMIES)}
        task, why = verdict(row.task_dir, grades)
        result.update(grades=grades, why=why, task=task_figures(task))
    result.update(seconds=round(time.monotonic() - wall), cpu_seconds=round(cpu_seconds() - cpu))
    return result


_ERROR = re.compile(r"(\berror\b|\bE: |Error:|fatal|cannot stat|was not built)", re.I)


def first_error(log: Path) -> str | None:
    """The first line of a failed build's log that says error, without terminal colours: a
    Docker build failure's own message is only the command that failed. A check of taskfoundry's
    own that failed it (`taskfoundry: ... needs shared libraries of the build tree`) goes first:
    folks' first error line was a warning of g-ir-scanner's that did not stop its build."""
    if not log.is_file():
        return None
    text = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace"))
    lines = [line.strip() for line in text.splitlines()]
    own = [line for line in lines if line.startswith("taskfoundry: ")]
    errors = [line for line in lines if _ERROR.search(line) and not line.startswith(("Step ", "The command"))]
    found = own + errors
    return found[0][:200] if found else None


def task_figures(task: TaskYaml) -> Figures:
    stats = task.stats
    return {
        "task_id": task.task_id,
        "language": task.language,
        "tests_kept": stats.tests_kept,
        "line_rate": stats.line_rate,
        "mutation_score": stats.mutation_score,
        "recall_tests": stats.recall_tests,
    }


def run_all(args: argparse.Namespace) -> None:
    """Every source without a result yet, one at a time, each result written when it ends; the
    list is read again before each, so sources added to a catalog meanwhile are built too."""
    out = args.out
    while True:
        sources, _ = sources_of(args)
        pending = [(n, s) for n, s in enumerate(sources) if not (args.results / f"{slug(s)}.json").exists()]
        if not pending:
            return
        n, source = pending[0]
        path = args.results / f"{slug(source)}.json"
        if args.until and time.strftime("%H:%M") >= args.until:
            print(f"stopping at {args.until}: {len(pending)} sources left for a re-run", file=sys.stderr)
            return
        print(f"[{n + 1}/{len(sources)}] {source}", file=sys.stderr, flush=True)
        try:
            write_json(path, run_source(source, out, args, n))
        except Exception as exc:  # the harness's own failure on one source is that source's row
            row = RunRow(source=source, status="failed", stage="yield", error=f"{type(exc).__name__}: {exc}")
            write_json(path, {"source": source, "row": row.model_dump(mode="json"), "why": None,
                              "task": None, "seconds": 0, "cpu_seconds": 0})  # fmt: skip


def past(row: RunRow) -> list[str]:
    """The stages a source got past."""
    if row.status == "built":
        return STAGES
    if row.stage in STAGES:
        return STAGES[: STAGES.index(row.stage)]
    return []


def reason(row: RunRow, detail: str | None = None) -> str:
    """A failure's stage and message (a failed Docker build's first error line instead of the
    command), with what differs between sources blanked."""
    text = (detail or row.error or "no message").strip().splitlines()[0][:160]
    text = re.sub(r"(/[\w.+@-]+)+", "<path>", text)
    text = re.sub(r"\b[0-9a-f]{7,64}\b", "<hash>", text)
    text = re.sub(r"\d+(\.\d+)*", "N", text)
    return f"{row.stage or 'unknown'}: {text}"


def dummy_tarball(name: str, path: Path) -> Path:
    """A submission whose compile.sh writes the dummy `name` as ./executable."""
    script = render_dummy(name, "usage: executable [options]\n").decode()
    compile_sh = f"#!/bin/sh\ncat > executable <<'TF_DUMMY'\n{script}TF_DUMMY\nchmod +x executable\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("compile.sh")
        info.size, info.mode = len(compile_sh.encode()), 0o755
        tar.addfile(info, io.BytesIO(compile_sh.encode()))
    return path


def graded(task_dir: Path, out: Path, who: str) -> float | None:
    """The task graded by `taskfoundry eval` with `who` as the submission: the reference
    (solution.tar.gz) or a dummy; its pass rate (None: eval gave none)."""
    run = out / "yield-eval" / task_dir.name / who
    shutil.rmtree(run, ignore_errors=True)
    target = run / task_dir.name / "submission.tar.gz"
    if who == "reference":
        target.parent.mkdir(parents=True)
        shutil.copy(task_dir / "solution.tar.gz", target)
    else:
        dummy_tarball(who, target)
    argv = [str(BIN / "taskfoundry"), "eval", str(run), "--tasks", str(task_dir.parent), "--workers", "2"]
    with (out / "eval.log").open("ab") as log:
        subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=False)
    summary = run / "summary.json"
    tasks = json.loads(summary.read_text())["tasks"] if summary.exists() else []
    return next((t["pass_rate"] for t in tasks if t["task_id"] == task_dir.name), None)


Grades = dict[str, float | None]  # who (reference, a dummy) -> the task's pass rate


def verdict(task_dir: Path, grades: Grades) -> tuple[TaskYaml, list[str]]:
    """The task and what keeps it from being accepted (nothing: accepted): the bars of its
    acceptance gate it missed, as its build wrote them, then what this benchmark checks itself."""
    task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    why = []
    leak_file = task_dir / "reports" / "leak.json"
    leak = json.loads(leak_file.read_text()) if leak_file.exists() else {"verdict": "not scanned"}
    if leak.get("verdict") != "clean":
        why.append(f"cleanroom {leak.get('verdict')}")
    why += task.grade.reasons if task.grade else ["not gated (built before the acceptance gate)"]
    for who, rate in grades.items():
        want = 1.0 if who == "reference" else 0.0
        if rate != want:
            why.append(f"{who} graded {rate} (not {want})")
    return task, why


def report(results: list[Figures]) -> Figures:
    rows = [RunRow.model_validate(r["row"]) for r in results]
    stages = {stage: sum(stage in past(row) for row in rows) for stage in STAGES}
    reasons = Counter(
        reason(row, r.get("detail")) for row, r in zip(rows, results, strict=True) if row.status != "built"
    )
    reasons.update(f"not accepted: {why}" for r in results for why in r["why"] or [])
    tasks = [r["task"] for r in results if r["why"] == []]
    scores = [t["mutation_score"] for t in tasks if t["mutation_score"] is not None]
    return {
        "sources": len(rows),
        "past_stage": stages,
        "gold_and_coverage_built": stages["build"],
        "built": stages["package"],
        "accepted": len(tasks),
        "reasons": reasons.most_common(),
        "line_rate": _mean([t["line_rate"] for t in tasks]),
        "mutation_score": _mean(scores),
        "languages": Counter(t["language"] for t in tasks).most_common(),
        "limits": Counter(_limit(r) for r in results).most_common(),
        "bases": Counter(r.get("base_suite", "not recorded") for r in results).most_common(),
        "wall_seconds": sum(r["seconds"] for r in results),
        "cpu_seconds": sum(r["cpu_seconds"] for r in results),
    }


def _limit(result: Figures) -> str:
    """A result's time limit: recorded since 2026-11-28; before, only a timed-out row's message has it."""
    if "limit_minutes" in result:
        return f"{result['limit_minutes']:g} min"
    found = re.search(r"time limit of ([\d.]+) min", result["row"].get("error") or "")
    return f"{found.group(1)} min" if found else "not recorded"


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def print_report(figures: dict[str, Any], rule: str, results: list[Figures]) -> None:
    n, wall, cpu = figures["sources"], figures["wall_seconds"], figures["cpu_seconds"]
    limits = ", ".join(f"{limit} ({count})" for limit, count in figures["limits"])
    print(f"rule: {rule}\nsources: {n}; wall {wall / 60:.1f} min; machine CPU {cpu / 60:.1f} min")
    bases = ", ".join(f"{suite} ({count})" for suite, count in figures["bases"])
    print(f"time limit a source (sources): {limits}")
    print(
        f'base image suite (sources; "not recorded": built before it was, on the default trixie): {bases}\n'
    )
    print("| stage | got past | share |\n|---|---|---|")
    for stage, count in figures["past_stage"].items():
        print(f"| {stage} | {count} | {100 * count / n:.0f}% |" if n else f"| {stage} | 0 | - |")
    accepted = figures["accepted"]
    print(f"| accepted | {accepted} | {100 * accepted / n:.0f}% |" if n else "| accepted | 0 | - |")
    per = f"{cpu / 60 / accepted:.1f}" if accepted else "-"
    print(f"\nCPU-minutes per accepted task: {per}; accepted tasks' mean line coverage "
          f"{figures['line_rate']}, mean mutation score {figures['mutation_score']}; "
          f"languages {figures['languages']}\n")  # fmt: skip
    print("| why stopped | sources |\n|---|---|")
    for why, count in figures["reasons"]:
        print(f"| {why} | {count} |")
    print("\n| source | got to | kept tests | lines | mutation | minutes | verdict |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(source_line(r))


def source_line(result: Figures) -> str:
    row, task = RunRow.model_validate(result["row"]), result["task"] or {}
    stage = "package" if row.status == "built" else f"failed in {row.stage or '?'}"
    verdict = (
        "accepted" if result["why"] == [] else "; ".join(result["why"] or [reason(row, result.get("detail"))])
    )
    score = task.get("mutation_score")
    cells = [result["source"], stage, task.get("tests_kept", "-"), task.get("line_rate", "-")]
    cells += ["-" if score is None else score, f"{result['seconds'] / 60:.1f}", verdict]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def sources_of(args: argparse.Namespace) -> tuple[list[str], str]:
    if args.catalog is None:
        return list(args.sources), args.rule or "the sources named on the command line"
    entries = load_catalog(args.catalog)[: args.limit]
    rule = args.rule or f"the first {len(entries)} entries of {args.catalog} (a discovery catalog), in order"
    return [e.source for e in entries], rule


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("sources", nargs="*")
    parser.add_argument("--catalog", type=Path, default=None, help="a refresh catalog (taskfoundry discover)")
    parser.add_argument("--limit", type=int, default=None, help="the first N of the catalog")
    parser.add_argument("--rule", default=None, help="how the sources were chosen, for the report")
    parser.add_argument("--mutants", type=int, default=100, help="mutants per task")
    parser.add_argument("--source-minutes", type=float, default=45, help="time limit of one source's build")
    parser.add_argument("--config", type=Path, default=None, help="e.g. sources.debian.suite: sid")
    parser.add_argument("--out", type=Path, default=Path("/tmp/tf-bench-yield"))
    parser.add_argument("--results", type=Path, default=None, help="one result per source [OUT/results]")
    parser.add_argument("--until", default=None, help="HH:MM: start no source after this time of day")
    parser.add_argument("--report-only", action="store_true", help="print what the results folder holds")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    sources, rule = sources_of(args)
    if not sources:
        parser.error("no sources: name some, or give --catalog")
    args.out.mkdir(parents=True, exist_ok=True)
    args.results = args.results or args.out / "results"
    if not args.report_only:
        run_all(args)
    files = [args.results / f"{slug(source)}.json" for source in sources]
    results = [json.loads(f.read_text()) for f in files if f.exists()]
    figures = report(results)
    figures.update(rule=rule, pending=len(sources) - len(results))
    print_report(figures, rule, results)
    if figures["pending"]:
        print(f"\n{figures['pending']} of {len(sources)} sources have no result yet: re-run to build them")
    if args.json:
        write_json(args.json, figures)


if __name__ == "__main__":
    main()
