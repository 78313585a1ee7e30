"""Where the test suite's time goes: per worker, group and module, the slowest tests and set-ups.

    .venv/bin/python benchmarks/test_times.py [--run] [--phases FILE] [--top 20] [-- PYTEST ARGS]

Every pytest run of tests/ keeps each test's phase times (set-up, call, teardown) and the xdist
worker that ran it in out/test-times/phases.jsonl (tests/conftest.py). This prints (markdown)
from that file: each worker's busy time (the run's wall time is about the largest), each module
group's (what one worker runs whole: tests/conftest.py `module_group`), each module's, the
slowest tests and the slowest set-ups (a module- or session-scoped build is charged to the
first test that asks for it). `--run` first runs the suite as `make test` does.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PHASES = ROOT / "out" / "test-times" / "phases.jsonl"
sys.path.insert(0, str(ROOT / "tests"))


def run_suite(extra: list[str]) -> int:
    """`make test`'s pytest command."""
    cmd = [str(ROOT / ".venv/bin/pytest"), "tests", "-n", "3", "--dist", "loadfile", "-q", *extra]
    return subprocess.run(cmd, cwd=ROOT, check=False).returncode


def load(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _group(nodeid: str) -> str:
    from conftest import module_group  # the scheduler's own grouping

    return module_group(nodeid)


def table(title: str, rows: list[tuple[str, float, int]], total: float) -> str:
    lines = [f"### {title}", "", "| name | seconds | share | tests |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {secs:.1f} | {secs / total:.1%} | {count} |" for name, secs, count in rows]
    return "\n".join(lines)


def ranked(sums: dict[str, float], counts: dict[str, set[str]], n: int) -> list[tuple[str, float, int]]:
    return [(k, v, len(counts[k])) for k, v in sorted(sums.items(), key=lambda kv: -kv[1])[:n]]


def report(rows: list[dict[str, object]], top: int) -> str:
    per_test: dict[str, float] = defaultdict(float)
    sums: dict[str, dict[str, float]] = {"worker": defaultdict(float), "group": defaultdict(float)}
    sums["module"] = defaultdict(float)
    members: dict[str, dict[str, set[str]]] = {k: defaultdict(set) for k in sums}
    setups: list[tuple[float, str]] = []
    for row in rows:
        nodeid, secs = str(row["nodeid"]), float(row["seconds"])  # type: ignore[arg-type]
        per_test[nodeid] += secs
        keys = {"worker": str(row.get("worker") or "main"), "group": _group(nodeid)}
        keys["module"] = nodeid.split("::", 1)[0]
        for kind, key in keys.items():
            sums[kind][key] += secs
            members[kind][key].add(nodeid)
        if row["when"] == "setup":
            setups.append((secs, nodeid))
    total = sum(per_test.values()) or 1.0
    slow = sorted(per_test.items(), key=lambda kv: -kv[1])[:top]
    return "\n\n".join(
        [
            f"{len(per_test)} tests, {total:.0f} s of test time in all",
            table(
                "Workers (busy time: the run's wall time is about the largest)",
                ranked(sums["worker"], members["worker"], 8),
                total,
            ),
            table(
                "Module groups (one worker runs each whole)",
                ranked(sums["group"], members["group"], top),
                total,
            ),
            table("Modules", ranked(sums["module"], members["module"], top), total),
            table("Slowest tests (set-up, call and teardown)", [(k, v, 1) for k, v in slow], total),
            table("Slowest set-ups", [(n, s, 1) for s, n in sorted(setups, reverse=True)[:top]], total),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="run the suite first, as make test does")
    parser.add_argument("--phases", type=Path, default=PHASES)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    if args.run:
        print(f"pytest exited {run_suite(args.pytest_args)}")
    if not args.phases.is_file():
        sys.exit(f"test_times: no {args.phases}: run the tests (or this with --run) first")
    print(report(load(args.phases), args.top))


if __name__ == "__main__":
    main()
