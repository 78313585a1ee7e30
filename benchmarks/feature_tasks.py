"""Feature tasks (FeatureBench / ACE-Bench kind) from real Python packages; prints tables (markdown).

For each SOURCE (by default PyPI sdists that ship their own pytest suites): the feature
kind's stages run in order (environment, trace + extraction, review, validate, package),
then every task is graded three times through `taskfoundry eval`'s dispatch by kind: its
`solution.tar.gz` (must resolve; its wall time is the grading time per task), its start
state as the worker gets it, taken out of its `:task_cleanroom` image (must not: F2P fail,
P2P pass), and an empty submission (must not). The package stage's self-check has graded
the same three already and removed the tasks that failed it: those are listed per source
with the reason (`selfcheck dropped`). A failure is a row with its reason. Thresholds are
ACE-Bench's (> 100 removed lines, >= 10 F2P) unless given.

    .venv/bin/python benchmarks/feature_tasks.py [--out DIR] [--max-tasks N] [--json FILE] [SOURCE ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from taskfoundry.config import Config
from taskfoundry.errors import TaskfoundryError
from taskfoundry.evaluate.run import evaluate_one
from taskfoundry.kinds.feature.env import environment_stage
from taskfoundry.kinds.feature.generate import generate_stage
from taskfoundry.kinds.feature.grade import start_state_submission
from taskfoundry.kinds.feature.package import package_stage
from taskfoundry.kinds.feature.review import review_stage
from taskfoundry.kinds.feature.selfcheck import empty_submission
from taskfoundry.kinds.feature.taskfile import FeatureTaskYaml
from taskfoundry.kinds.feature.validate import validate_stage
from taskfoundry.models import load_yaml_model
from taskfoundry.pipeline.provenance import StageTimes
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sandbox.docker import docker_client
from taskfoundry.sections import for_feature

PACKAGES = [
    "pypi:boltons",  # utilities, one test file per module
    "pypi:python-dateutil",  # dates; tests inside the package (dateutil/test)
    "pypi:click",  # CLI toolkit
]
NAMESPACE = "tfbench"


def _reason(text: str) -> str:
    return text.split(":", 1)[0]


def build_one(source: str, config: Config, client: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"source": source}
    settings = for_feature(config)
    seconds: dict[str, float] = {}

    def timed(name: str, fn: Any, *args: Any) -> Any:
        start = time.monotonic()
        try:
            return fn(*args)
        finally:
            seconds[name] = round(time.monotonic() - start, 1)

    try:
        src = timed("source", source_stage, source, config.sources, config.work_dir)
        env = timed("environment", environment_stage, src, None, settings, client)
        row |= {
            "tests": len(env.tests),
            "test_files": len(env.passing_files) + len(env.failing_files),
            "passing_files": len(env.passing_files),
            "skipped_requirements": len(env.notes) if "reused" not in " ".join(env.notes) else 0,
        }
        gen = timed("trace+extract", generate_stage, src, None, env, settings, client)
        row["candidates"] = len(gen.candidates)
        row["extracted"] = sum(1 for c in gen.candidates if not c.dropped)
        review = timed("review", review_stage, gen)
        row["reviewed"] = len(review.kept)
        verdict = timed("validate", validate_stage, gen, review, env, settings, client)
        row["validated"] = len(verdict.tasks)
        row["dropped"] = dict(Counter(_reason(why) for why in verdict.dropped.values()))
        dirs = timed(
            "package",
            package_stage,
            src,
            None,
            env,
            gen,
            review,
            verdict,
            settings,
            client,
            StageTimes(seconds=dict(seconds)),
        )
        row["task_dirs"] = [str(d) for d in dirs]
        dropped = settings.names(src).kind_dir("feature", "selfcheck") / "dropped.json"
        row["selfcheck_dropped"] = json.loads(dropped.read_text()) if dropped.is_file() else {}
    except TaskfoundryError as exc:
        row["error"] = str(exc)[:300]
    row["seconds"] = seconds
    return row


def from_selfcheck(task_dir: Path, out: dict[str, Any]) -> dict[str, Any]:
    """What the package stage's self-check found (the same three gradings), without grading
    again; F2P failing / P2P passing are not in its record (blank)."""
    found = json.loads((task_dir / "reports" / "feature.json").read_text())["selfcheck"]
    for what, key in (("solution", "reference"), ("start", "start_state"), ("empty", "empty")):
        out[what] = {
            "resolved": found[key] == "resolved",
            "verdict": found[key][:200],
            "f2p_failing": "",
            "p2p_passing": "",
            "seconds": float(found.get(f"{key}_seconds", "nan")),
        }
    return out


def grade(task_dir: Path, client: Any, config: Config, again: bool = True) -> dict[str, Any]:
    task = load_yaml_model(task_dir / "task.yaml", FeatureTaskYaml)
    out: dict[str, Any] = {
        "task": task.task_id,
        "level": task.level,
        "removed_lines": task.removed_lines,
        "f2p": len(task.f2p),
        "p2p": len(task.p2p),
        "interface": len(task.interface),
        "deselected": len(task.test_command.split("--deselect=")) - 1,
    }
    if not again:
        return from_selfcheck(task_dir, out)
    with tempfile.TemporaryDirectory(prefix="tf-feature-bench-") as tmp:
        run = Path(tmp)
        for what in ("solution", "start", "empty"):
            sub = run / what / task.task_id / "submission.tar.gz"
            sub.parent.mkdir(parents=True)
            if what == "solution":
                sub.write_bytes((task_dir / "solution.tar.gz").read_bytes())
            elif what == "start":
                start_state_submission(task_dir, client, sub)
            else:
                empty_submission(sub)
            began = time.monotonic()
            score = evaluate_one(task_dir, run / what, config.eval, client, what)
            took = round(time.monotonic() - began, 1)
            result = json.loads((run / what / task.task_id / f"{task.task_id}.eval.json").read_text())
            status = {t["name"]: t["status"] for t in result["test_results"]}
            out[what] = {
                "resolved": score.resolved,
                "pass_rate": score.pass_rate,
                "f2p_failing": sum(status.get(t) != "passed" for t in task.f2p),
                "p2p_passing": sum(status.get(t) == "passed" for t in task.p2p),
                "error": score.error_code,
                "seconds": took,
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=PACKAGES)
    parser.add_argument("--out", type=Path, default=Path("out-feature-bench"))
    parser.add_argument("--max-tasks", type=int, default=3, help="features kept per package (None: all)")
    parser.add_argument("--min-removed-lines", type=int, default=100)
    parser.add_argument("--min-f2p", type=int, default=10)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--selfcheck-only",
        action="store_true",
        help="report the package stage's self-check (the same three gradings) instead of grading again",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    feature = {
        "max_tasks": args.max_tasks,
        "min_removed_lines": args.min_removed_lines,
        "min_f2p": args.min_f2p,
    }
    config = Config(out=args.out, namespace=NAMESPACE, kind="feature", feature=feature)
    client = docker_client()
    rows, tasks = [], []
    for source in args.sources:
        row = build_one(source, config, client)
        rows.append(row)
        for task_dir in row.get("task_dirs", []):
            again = not args.selfcheck_only
            tasks.append(grade(Path(task_dir), client, config, again) | {"source": source})
    print("## Yield per stage\n")
    print(
        "| source | tests | test files | passing files | candidates | extracted | reviewed | validated "
        "| tasks | dropped (review + validation), by reason | selfcheck dropped | seconds | error |"
    )
    print("|" + "---|" * 13)
    for r in rows:
        print(
            f"| {r['source']} | {r.get('tests', '')} | {r.get('test_files', '')} "
            f"| {r.get('passing_files', '')} "
            f"| {r.get('candidates', '')} | {r.get('extracted', '')} | {r.get('reviewed', '')} "
            f"| {r.get('validated', '')} | {len(r.get('task_dirs', []))} | {r.get('dropped', '')} "
            f"| {r.get('selfcheck_dropped', '')} | {r['seconds']} | {r.get('error', '')} |"
        )
    print("\n## Tasks\n")
    print(
        "| task | level | removed lines | F2P | P2P (deselected) | interface | solution resolves "
        "| start resolves "
        "| start: F2P failing | start: P2P passing | empty resolves | empty: F2P failing "
        "| grading s (solution / start / empty) |"
    )
    print("|" + "---|" * 13)
    for t in tasks:
        s, w, e = t["solution"], t["start"], t["empty"]
        print(
            f"| {t['task']} | {t['level']} | {t['removed_lines']} | {t['f2p']} "
            f"| {t['p2p']} ({t['deselected']}) "
            f"| {t['interface']} | {s['resolved']} | {w['resolved']} "
            f"| {w['f2p_failing']}/{t['f2p']} | {w['p2p_passing']}/{t['p2p']} "
            f"| {e['resolved']} | {e['f2p_failing']}/{t['f2p']} "
            f"| {s['seconds']} / {w['seconds']} / {e['seconds']} |"
        )
    ok = all(
        t["solution"]["resolved"] and not t["start"]["resolved"] and not t["empty"]["resolved"] for t in tasks
    )
    print(
        f"\n{len(tasks)} task(s) from {len(rows)} source(s); "
        f"every solution resolves and no start state or empty submission does: {ok}"
    )
    if args.json:
        args.json.write_text(json.dumps({"sources": rows, "tasks": tasks}, indent=2))


if __name__ == "__main__":
    main()
