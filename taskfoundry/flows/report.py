"""What an author reads: a task's figures (dashboard table, markdown, `taskfoundry show`) and a
batch run's summary. Read from the task's own files, so the same text comes from any machine."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskfoundry.flows.summary import RunRow, RunSummary
from taskfoundry.models import TaskStats, TaskYaml, load_yaml_model


@dataclass
class ReportFacts:
    """Counts from `reports/`: lint findings by severity, triage classes, leak verdict, test assets."""

    lint: dict[str, int] = field(default_factory=dict)
    triage: dict[str, int] = field(default_factory=dict)
    leak: str = "unknown"
    assets: str = "unknown"
    images_built: dict[str, bool] = field(default_factory=dict)
    mutation: str = "not analysed"


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def read_facts(task_dir: Path) -> ReportFacts:
    facts = ReportFacts()
    lint = _json(task_dir / "reports" / "lint.json") or {}
    for finding in lint.get("findings", []):
        facts.lint[finding["severity"]] = facts.lint.get(finding["severity"], 0) + 1
    for assertion in lint.get("assertions", []):
        facts.triage[assertion["class"]] = facts.triage.get(assertion["class"], 0) + 1
    leak = _json(task_dir / "reports" / "leak.json") or {}
    facts.leak = leak.get("verdict", "unknown")
    assets = _json(task_dir / "reports" / "assets.json")
    if assets is not None:
        facts.assets = f"{len(assets.get('kept', []))} kept, {len(assets.get('dropped', []))} dropped"
    images = _json(task_dir / "reports" / "images.json") or {}
    facts.images_built = {k: bool(images[k]) for k in ("task_built", "cleanroom_built") if k in images}
    mutation = _json(task_dir / "reports" / "mutation.json")
    if mutation is not None:
        facts.mutation = mutation_text(mutation)
    return facts


def mutation_text(report: dict[str, Any]) -> str:
    """`72.5% (116 killed, 44 survived; 6 timeout, 2 build failed, 2 equivalent of 170 mutants)`."""
    if report.get("skipped"):
        return f"not analysed: {report['skipped']}"
    score = report.get("score")
    shown = "n/a" if score is None else f"{score:.1%}"
    rest = [
        f"{report.get(k, 0)} {k.replace('_', ' ')}"
        for k in ("timeout", "build_failed", "equivalent", "error")
    ]
    rest = [r for r in rest if not r.startswith("0 ")]
    return (
        f"{shown} ({report.get('killed', 0)} killed, {report.get('survived', 0)} survived"
        f"{'; ' + ', '.join(rest) if rest else ''} of {report.get('mutants', 0)} mutants)"
    )


def recall_text(s: TaskStats) -> str:
    """How many tests recall a published algorithm's bytes, and whether they decide resolved."""
    if not s.recall_tests:
        return "none"
    where = (
        "kept in the resolve metric" if s.recall_in_resolve else "out of the resolve metric (ignored_tests)"
    )
    return f"{s.recall_tests}, {where}"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"


def task_table(
    task: TaskYaml, facts: ReportFacts, cached: dict[str, bool] | None = None
) -> list[dict[str, str]]:
    """The per-task dashboard table: one metric a row."""
    s = task.stats
    rows = [
        ("task", task.task_id),
        ("commit", task.commit[:12]),
        ("language", task.language),
        ("tests generated", str(s.tests_generated)),
        ("tests kept", str(s.tests_kept)),
        ("dropped", _counts(s.dropped)),
        ("line coverage", f"{s.line_rate:.1%}"),
        ("dummy pass rate", f"{s.dummy_pass_rate:.1%}"),
        ("replay pass rate", replay_text(s)),
        ("recall tests", recall_text(s)),
        ("mutation score", facts.mutation),
        ("lint findings", _counts(facts.lint)),
        ("triage", _counts(facts.triage)),
        ("leak scan", facts.leak),
        ("test assets", facts.assets),
    ]
    if task.kind == "program":  # the other kinds have no executable gold
        rows.append(("gold", gold_verdict(task) or "not checked"))
    rows += [(f"dropped: {k}", str(v)) for k, v in sorted(s.dropped.items())]
    for stage, secs in s.stage_seconds.items():
        how = " (cached)" if cached and cached.get(stage) else ""
        rows.append((f"{stage} time", f"{secs:.1f} s{how}"))
    return [{"metric": k, "value": v} for k, v in rows]


GOLD_TEXT = {
    "sealed": "sealed (no worker attack got code into it or bytes out of it: reports/integrity.json)",
    "instrumentable": "**instrumentable**: a worker can load code into the gold and copy it out "
    "(dynamically linked; reports/integrity.json)",
    "source_visible": "source-visible by design (a script its interpreter reads)",
    None: "not checked (built before reports/integrity.json)",
}


def replay_text(s: TaskStats) -> str:
    """What a lookup table of the gold on public probes passes (reports/replay.json)."""
    if s.replay_pass_rate is None:
        return "not measured"
    before = (
        "" if s.replay_pass_rate_before is None else f" ({s.replay_pass_rate_before:.1%} before filtering)"
    )
    return f"{s.replay_pass_rate:.1%} of kept tests{before}"


def gold_verdict(task: TaskYaml) -> str | None:
    """reports/integrity.json's verdict; a source-visible task built before it is one by design."""
    return task.gold_integrity or ("source_visible" if task.source_visible else None)


def _gold_line(task: TaskYaml) -> str:
    """The gold's integrity, for the program kind (the other kinds have no executable gold)."""
    return f"- gold: {GOLD_TEXT[gold_verdict(task)]}\n" if task.kind == "program" else ""


def markdown_report(task: TaskYaml, task_dir: Path, facts: ReportFacts | None = None) -> str:
    s = task.stats
    facts = facts or read_facts(task_dir)
    stages = "\n".join(f"| {k} | {v:.1f} s |" for k, v in s.stage_seconds.items())
    created = f"- created: {task.created_at:%Y-%m-%d %H:%M} UTC\n"
    return (
        f"# {task.task_id}\n\n"
        f"{_grade_line(task)}"
        f"- source: `{task.source}` at `{task.commit[:12]}` ({task.language}, {task.difficulty})\n"
        f"- tests: {s.tests_generated} generated, **{s.tests_kept} kept**, "
        f"dropped: {_counts(s.dropped)}\n"
        f"- line coverage of kept tests: {s.line_rate:.1%} "
        f"({s.lines_covered}/{s.lines_total} first-party lines)\n"
        f"- dummy pass rate before filtering: {s.dummy_pass_rate:.1%}\n"
        f"- replay pass rate (the gold's outputs on public probes, replayed): {replay_text(s)}\n"
        f"- recall tests: {recall_text(s)}\n"
        f"- mutation score of kept tests: {facts.mutation}\n"
        f"- lint findings: {_counts(facts.lint)}; triage: {_counts(facts.triage)}\n"
        f"- leak scan: {facts.leak}; test assets: {facts.assets}\n"
        f"{_gold_line(task)}{created}"
        f"- images: `{task.images.task_cleanroom}`, `{task.images.task}`\n"
        f"- written to: `{task_dir}`\n\n| stage | wall time |\n|---|---|\n{stages}\n"
    )


def _grade_line(task: TaskYaml) -> str:
    """The acceptance gate's verdict first: a task below it is no benchmark task as it stands."""
    if task.grade is None:
        return ""
    if task.grade.benchmark_grade:
        return "- grade: **benchmark-grade** (every bar of the acceptance gate met)\n"
    return f"- grade: **below the acceptance gate**: {'; '.join(task.grade.reasons)}\n"


def summary_text(task_dir: Path) -> str:
    task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    return markdown_report(task, task_dir)


def built_text(task_dirs: list[Path], tasks_dir: Path) -> str:
    """What `taskfoundry build` prints: one task's report, or a line per task of a source that
    gave several (or none)."""
    if len(task_dirs) == 1:
        return summary_text(task_dirs[0])
    lines = [f"{len(task_dirs)} tasks built in {tasks_dir}"]
    for task_dir in task_dirs:
        task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
        lines.append(f"  {task.task_id}: {task.stats.tests_kept} tests kept")
    return "\n".join(lines)


def failure_text(row: RunRow) -> str:
    """`<stage> stage failed: <message> (log: <file>)`, as the single-build command says it."""
    where = f" (log: {row.log})" if row.log else ""
    what = f"{row.stage} stage failed" if row.stage else "failed"
    return f"{what}: {row.error}{where}"


def run_table(summary: RunSummary) -> list[dict[str, object]]:
    """The run summary table: one row per source."""
    return [
        {
            "source": r.source,
            "status": r.status,
            "task": r.task_id or "",
            "kept": "" if r.tests_kept is None else r.tests_kept,
            "coverage": "" if r.line_rate is None else f"{r.line_rate:.1%}",
            "seconds": round(r.seconds, 1),
            "cached": ",".join(r.cached_stages),
            "error": failure_text(r) if r.status in ("failed", "cancelled") else "",
        }
        for r in summary.rows
    ]


def run_markdown(summary: RunSummary) -> str:
    counts = ", ".join(f"{s}: {summary.count(s)}" for s in ("built", "skipped", "failed", "cancelled"))
    lines = [
        f"# {summary.flow}: {len(summary.rows)} sources in {summary.seconds:.0f} s",
        "",
        counts + summary.gate_text(),
    ]
    if summary.budget_exceeded:
        lines.append(f"\n**Ended early: failure budget {summary.max_failures} exceeded.**")
    lines += [f"- `{r.source}`: {failure_text(r)}" for r in summary.rows if r.status == "failed"]
    return "\n".join(lines) + "\n"
