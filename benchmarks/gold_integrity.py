"""Per language: how many built tasks got a static gold, and what the worker's attacks got.

    python benchmarks/gold_integrity.py OUT [OUT ...]

Reads every task directory's task.yaml and reports/integrity.json (written by the cleanroom
stage); prints one row per task and a count per language and verdict.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from taskfoundry.kinds.program.cleanroom.reports import IntegrityReport
from taskfoundry.models import TaskYaml, load_json_model, load_yaml_model


def rows(outs: list[Path]) -> list[tuple[str, str, str, str, str]]:
    found = []
    for out in outs:
        for task_dir in sorted((out / "tasks").glob("*/")):
            task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
            path = task_dir / "reports" / "integrity.json"
            if not path.is_file():
                found.append((task.task_id, task.language, "?", "not checked", ""))
                continue
            report = load_json_model(path, IntegrityReport)
            found.append(
                (task.task_id, task.language, report.linkage, report.verdict, ", ".join(report.succeeded()))
            )
    return found


def main(argv: list[str]) -> None:
    outs = [Path(a) for a in argv]
    missing = [str(out) for out in outs if not (out / "tasks").is_dir()]
    if not outs or missing:
        where = ", ".join(missing) or "(none given)"
        sys.exit(f"usage: gold_integrity.py OUT [OUT ...]; no tasks/ folder in: {where}")
    table = rows(outs)
    for task_id, language, link, verdict, got in table:
        print(f"{task_id:<40} {language:<6} {link:<8} {verdict:<15} {got}")
    print()
    for (language, link), count in sorted(Counter((r[1], r[2]) for r in table).items()):
        print(f"{language:<6} {link:<8} {count}")


if __name__ == "__main__":
    main(sys.argv[1:])
