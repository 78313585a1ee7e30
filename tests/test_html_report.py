"""The HTML report of an eval run (issue 59): the pass-rate distribution across its tasks."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from taskfoundry.cli import main
from taskfoundry.grading.models import EvalSummary, TaskScore
from taskfoundry.models import save_json


def _score(task_id: str, passed: int, tests: int = 10) -> TaskScore:
    rate = passed / tests
    return TaskScore(
        task_id=task_id,
        tests=tests,
        passed=passed,
        pass_rate=rate,
        resolved=rate == 1,
        near_resolved=rate >= 0.9,
    )


def test_a_run_s_report_charts_its_pass_rates_and_lists_its_tasks(tmp_path: Path) -> None:
    scores = [_score("a__x.1", 10), _score("b__y.2", 10), _score("c__z.3", 0), _score("d__w.4", 4)]
    save_json(tmp_path / "run" / "summary.json", EvalSummary(run_dir="run", tasks_dir="t", tasks=scores))
    result = CliRunner().invoke(main, ["report", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "run" / "report.html").read_text()
    assert result.output.strip() == str(tmp_path / "run" / "report.html")
    assert page.count("<svg") == 1 and "tasks by pass rate" in page and "http" not in page.split("<svg")[0]
    assert not re.search(r"<script[^>]*src=", page)  # nothing loaded from the web: it opens offline
    assert "90%-100%" in page and "d__w.4" in page and "40.0%" in page
    # the bars' values: 1 task at 0-10%, 1 at 40-50%, 2 at 90-100% (100% goes in the last tenth)
    values = [int(v) for v in re.findall(r'<desc class="value">(\d+)</desc>', page)]
    assert values == [1, 0, 0, 0, 1, 0, 0, 0, 0, 2], values


def test_report_refuses_what_is_neither_a_task_nor_a_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "neither a task directory (task.yaml) nor an eval run" in result.output
