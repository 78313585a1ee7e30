"""HTML reports an author opens in a browser: a task's (the suite's coverage by file, survivors by
operator, stage times, its rates) and an eval run's (the pass-rate distribution across tasks).

One self-contained file each: the charts are pygal's SVG inline, with no script from the web (pygal's
tooltips load from the web, and a report must open offline), the figures the same tables
`show` and the dashboard read (`taskfoundry.flows.report`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import pygal
from pygal.style import LightStyle

from taskfoundry import atomic
from taskfoundry.errors import ConfigError
from taskfoundry.flows.report import read_facts, task_table
from taskfoundry.grading.models import EvalSummary
from taskfoundry.models import TaskYaml, load_json_model, load_yaml_model

REPORT = "report.html"
MOST_FILES = 30  # the files with the most lines; the rest are summed into one bar
BINS = [(i / 10, (i + 1) / 10) for i in range(10)]

PAGE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string(
    """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222 }
table { border-collapse: collapse; margin: 1em 0 }
td, th { padding: .2em .8em; border-bottom: 1px solid #ddd }
th { text-align: left } figure { margin: 1.5em 0 } figcaption { font-weight: 600; margin-bottom: .4em }
.note { color: #666 }
</style></head><body>
<h1>{{ title }}</h1>
<p class="note">{{ subtitle }}</p>
{% for chart in charts %}<figure><figcaption>{{ chart.caption }}</figcaption>
{% if chart.svg %}{{ chart.svg | safe }}{% else %}<p class="note">{{ chart.empty }}</p>{% endif %}
</figure>
{% endfor %}<h2>{{ table_title }}</h2>
<table><tr>{% for h in header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</table>
</body></html>
"""
)


def _chart(kind: type[pygal.graph.graph.Graph], title: str, **options: Any) -> Any:
    return kind(
        title=title,
        style=LightStyle,
        js=[],  # no script from the web: the report opens offline
        width=900,
        height=options.pop("height", 420),
        print_values=False,
        truncate_label=60,
        **options,
    )


def _svg(chart: Any) -> str:
    return str(chart.render(is_unicode=True, disable_xml_declaration=True))


def _figure(caption: str, svg: str | None, empty: str) -> dict[str, str | None]:
    return {"caption": caption, "svg": svg, "empty": empty}


def coverage_chart(coverage: dict[str, Any]) -> str | None:
    """Line coverage by file (reports/coverage.json), the largest files first."""
    files = coverage.get("files") or {}
    sized = sorted(
        ((name, len(f.get("covered", [])), len(f.get("missed", []))) for name, f in files.items()),
        key=lambda t: -(t[1] + t[2]),
    )
    if not sized:
        return None
    shown, rest = sized[:MOST_FILES], sized[MOST_FILES:]
    if rest:
        shown.append((f"{len(rest)} other files", sum(c for _, c, _ in rest), sum(m for _, _, m in rest)))
    chart = _chart(
        pygal.HorizontalStackedBar, "lines covered and missed by the kept tests", height=120 + 22 * len(shown)
    )
    chart.x_labels = [name for name, _, _ in reversed(shown)]
    chart.add("covered", [c for _, c, _ in reversed(shown)])
    chart.add("missed", [m for _, _, m in reversed(shown)])
    return _svg(chart)


def survivors_chart(mutation: dict[str, Any]) -> str | None:
    """Mutants killed and survived by operator (reports/mutation.json)."""
    operators = mutation.get("operators") or {}
    if not operators:
        return None
    names = sorted(operators, key=lambda o: -int(operators[o].get("survived", 0)))
    chart = _chart(pygal.HorizontalStackedBar, "mutants by operator", height=120 + 22 * len(names))
    chart.x_labels = list(reversed(names))
    chart.add("survived", [int(operators[o].get("survived", 0)) for o in reversed(names)])
    chart.add("killed", [int(operators[o].get("killed", 0)) for o in reversed(names)])
    return _svg(chart)


def _bars(title: str, values: dict[str, float], **options: Any) -> str:
    """One bar a label, top to bottom in the order given."""
    chart = _chart(pygal.HorizontalBar, title, height=120 + 26 * len(values), show_legend=False, **options)
    chart.x_labels = list(reversed(values))
    chart.add(title, list(reversed(values.values())))
    return _svg(chart)


def stages_chart(seconds: dict[str, float]) -> str | None:
    return _bars("wall seconds by stage", {k: round(v, 1) for k, v in seconds.items()}) if seconds else None


def rates_chart(stats: Any) -> str:
    rates = {"line coverage": stats.line_rate, "dummy pass rate": stats.dummy_pass_rate}
    if stats.mutation_score is not None:
        rates["mutation score"] = stats.mutation_score
    if stats.replay_pass_rate is not None:
        rates["replay pass rate"] = stats.replay_pass_rate
    return _bars("rates, %", {k: round(100 * v, 1) for k, v in rates.items()}, range=(0, 100))


def task_html(task_dir: Path) -> str:
    task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    reports = task_dir / "reports"
    facts = read_facts(task_dir)
    charts = [
        _figure("Rates", rates_chart(task.stats), ""),
        _figure("Coverage by file", coverage_chart(_json(reports / "coverage.json")), "no coverage report"),
        _figure(
            "Survivors by operator",
            survivors_chart(_json(reports / "mutation.json")),
            f"no mutants analysed: {facts.mutation}",
        ),
        _figure("Stage times", stages_chart(task.stats.stage_seconds), "no stage times"),
    ]
    rows = [(r["metric"], r["value"]) for r in task_table(task, facts)]
    subtitle = f"{task.kind} task from {task.source} at {task.commit[:12]} ({task.language})"
    return PAGE.render(
        title=task.task_id,
        subtitle=subtitle,
        charts=charts,
        table_title="Figures",
        header=["", ""],
        rows=rows,
    )


def pass_rate_chart(summary: EvalSummary) -> str | None:
    """How many tasks fall in each tenth of pass rate (a task at 100% in the last bin)."""
    scored = [t for t in summary.tasks if not t.infra_error]
    if not scored:
        return None
    counts = [0] * len(BINS)
    for score in scored:
        counts[min(int(score.pass_rate * 10), 9)] += 1
    chart = _chart(pygal.Bar, "tasks by pass rate", height=380, show_legend=False)
    chart.x_labels = [f"{lo:.0%}-{hi:.0%}" for lo, hi in BINS]
    chart.add("tasks", counts)
    return _svg(chart)


def run_html(run_dir: Path) -> str:
    summary = load_json_model(run_dir / "summary.json", EvalSummary)
    charts = [_figure("Pass rates across tasks", pass_rate_chart(summary), "no task was graded")]
    rows = [
        (
            t.task_id,
            t.tests,
            t.passed,
            f"{t.pass_rate:.1%}",
            "yes" if t.resolved else "no",
            t.error_code or "",
        )
        for t in summary.tasks
    ]
    subtitle = (
        f"{len(summary.tasks)} tasks; mean pass rate {summary.mean_pass_rate:.1%}, "
        f"resolved {summary.resolved_rate:.1%}, near-resolved {summary.near_resolved_rate:.1%}"
    )
    header = ["task", "tests", "passed", "pass rate", "resolved", "error"]
    return PAGE.render(
        title=f"eval run {run_dir.name}",
        subtitle=subtitle,
        charts=charts,
        table_title="Tasks",
        header=header,
        rows=rows,
    )


def write_report(target: Path) -> Path:
    """The HTML report of `target` (a task directory, or an eval run's directory), written
    beside what it reports on; its path."""
    if (target / "task.yaml").is_file():
        path, text = target / "reports" / REPORT, task_html(target)
    elif (target / "summary.json").is_file():
        path, text = target / REPORT, run_html(target)
    else:
        raise ConfigError(f"{target}: neither a task directory (task.yaml) nor an eval run (summary.json)")
    atomic.write_text(path, text)
    return path


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
