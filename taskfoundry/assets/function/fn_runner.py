"""Runs reference functions inside the function kind's sandbox (hypothesis, coverage.py).

    python fn_runner.py drive MODE DIR --timeout S --jobs N
        every DIR/<id>/ holding spec.json: one child process per function (killed past S
        seconds: the function is dropped as `hang`), result in DIR/<id>/<MODE>.json
    python fn_runner.py explore|gate DIR/<id>

explore: inputs from hypothesis strategies (type hints via st.from_type, guesses from
defaults and comparisons, the comparisons' literals), derandomized (a fixed seed per round),
in rounds until every branch arc and line of the function is reached or the budget ends.
Each input runs the reference once (interval timer per call); its outcome is a case.
gate: the kept cases again under coverage.py (branch mode), twice (fresh module each time);
then trivial bodies and mutants, each of which must fail some case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fcall import call, load  # noqa: E402
from fcodec import Unencodable, encode, same_outcome  # noqa: E402


class Abort(Exception):
    def __init__(self, reason, detail=""):
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


# branch arcs and lines of the function, as coverage.py's parser sees them -----------------
def targets(source, first, last):
    from coverage.parser import PythonParser

    parser = PythonParser(text=source)
    parser.parse_source()
    inside = range(first, last + 1)
    exits = parser.exit_counts()
    arcs = {a for a in parser.arcs() if a[0] in inside and exits.get(a[0], 0) > 1}
    lines = {n for n in parser.statements if n in inside}
    return parser, arcs, lines


def translate(parser, raw_arcs):
    out = set()
    for a, b in raw_arcs:
        a2 = parser.first_line(a) if a > 0 else -parser.first_line(-a)
        b2 = parser.first_line(b) if b > 0 else -parser.first_line(-b)
        out.add((a2, b2))
    return out


class ArcTracer:
    """coverage.py's arc model with sys.settrace, cheap enough for one call at a time."""

    def __init__(self, path):
        self.path = path
        self.arcs = set()

    def _global(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename == self.path:
            last = [-frame.f_code.co_firstlineno]

            def local(frame, event, arg):
                if event == "line":
                    self.arcs.add((last[0], frame.f_lineno))
                    last[0] = frame.f_lineno
                elif event == "return":
                    self.arcs.add((last[0], -frame.f_code.co_firstlineno))
                return local

            return local
        return None

    def run(self, thunk):
        self.arcs = set()
        sys.settrace(self._global)
        try:
            return thunk()
        finally:
            sys.settrace(None)


# explore ---------------------------------------------------------------------------------
def strategies(fn, spec):
    import typing

    from hypothesis import strategies as st

    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    fallback = {
        "int": st.integers(-1000, 1000),
        "float": st.floats(-1e6, 1e6, allow_nan=False),
        "str": st.text(max_size=20),
        "bool": st.booleans(),
        "list": st.lists(st.integers(-100, 100), max_size=10),
        "dict": st.dictionaries(st.text(max_size=5), st.integers(-100, 100), max_size=5),
        "bytes": st.binary(max_size=20),
    }
    any_value = st.one_of(
        st.integers(-1000, 1000),
        st.text(max_size=20),
        st.floats(-1e6, 1e6, allow_nan=False),
        st.booleans(),
        st.lists(st.integers(-100, 100), max_size=8),
    )
    out = {}
    for param in spec["params"]:
        name = param["name"]
        base = None
        if name in hints:
            try:
                base = st.from_type(hints[name])
            except Exception:
                base = None
        if base is None and param.get("guess") in fallback:
            base = fallback[param["guess"]]
        if base is None:
            base = any_value
        literals = [decode_literal(v) for v in param.get("literals", [])]
        if literals:
            base = st.one_of(st.sampled_from(literals), base)
        out[name] = base
    return out


def decode_literal(v):
    from fcodec import decode

    return decode(v)


def explore(fdir, cfg):
    from hypothesis import HealthCheck, Phase, given, seed, settings

    spec = json.loads((fdir / "spec.json").read_text())
    path = str(fdir / "candidate.py")
    source = Path(path).read_text()
    fn = load(path, spec["name"], "reference")
    parser, want_arcs, want_lines = targets(source, spec["body_first"], spec["last"])
    tracer = ArcTracer(path)
    raises = set(spec.get("raises", []))
    cases: list[dict] = []
    seen: set[str] = set()
    got_arcs, got_lines = set(), set()
    counts = {"inputs": 0, "duplicate": 0, "invalid_input": 0, "unencodable": 0, "timeout": 0, "recursion": 0}
    started = time.monotonic()
    aborted: list[Abort] = []  # raised outside hypothesis: inside, its replay of the input would be flaky

    def record(**kwargs):
        if aborted or len(cases) >= cfg["max_cases"] or time.monotonic() - started > cfg["budget"]:
            return
        counts["inputs"] += 1
        try:
            inputs = {p["name"]: encode(kwargs[p["name"]]) for p in spec["params"]}
        except Unencodable:
            counts["unencodable"] += 1
            return
        key = json.dumps(inputs, sort_keys=True)
        if key in seen:
            counts["duplicate"] += 1
            return
        seen.add(key)
        outcome = tracer.run(lambda: call(fn, inputs, spec["npos"], cfg["call_timeout"]))
        if outcome.get("timeout"):
            counts["timeout"] += 1
            if counts["timeout"] >= 3:
                aborted.append(Abort("hang", f"{counts['timeout']} calls ran past {cfg['call_timeout']}s"))
            return
        if outcome.get("raises") == "RecursionError":
            counts["recursion"] += 1
            if counts["recursion"] >= 3:
                aborted.append(Abort("recursion", "the reference recursed without end on 3 inputs"))
            return
        if "unencodable" in outcome:
            counts["unencodable"] += 1
            return
        if "raises" in outcome and outcome["raises"] not in raises:
            counts["invalid_input"] += 1  # an exception the function does not raise itself
            return
        arcs = translate(parser, tracer.arcs)
        lines = {a for a, _ in arcs if a > 0} | {b for _, b in arcs if b > 0}
        got_arcs.update(arcs & want_arcs)
        got_lines.update(lines & want_lines)
        cases.append({"inputs": inputs, "expected": outcome})

    strats = strategies(fn, spec)
    rounds = 0
    for rounds in range(1, cfg["rounds"] + 1):  # noqa: B007 - reported
        probe = seed(cfg.get("seed", 0) + rounds)(
            settings(
                max_examples=cfg["examples"],
                database=None,
                deadline=None,
                derandomize=False,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )(given(**strats)(record))
        )
        try:
            probe()
        except Exception as exc:  # hypothesis could not draw (an unsupported type hint)
            counts["strategy_error"] = counts.get("strategy_error", 0) + 1
            if not cases:
                raise Abort("no_strategy", f"{type(exc).__name__}: {exc}"[:500]) from exc
            break
        if aborted:
            raise aborted[0]
        done = got_arcs >= want_arcs and got_lines >= want_lines
        if done or len(cases) >= cfg["max_cases"] or time.monotonic() - started > cfg["budget"]:
            break
    return {
        "cases": cases,
        "counts": counts,
        "rounds": rounds,
        "branches": [len(got_arcs), len(want_arcs)],
        "lines": [len(got_lines), len(want_lines)],
        "seconds": round(time.monotonic() - started, 3),
    }


# gate ------------------------------------------------------------------------------------
def run_cases(path, name, cases, npos, timeout, module):
    try:
        fn = load(path, name, module)
    except BaseException as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return [call(fn, c["inputs"], npos, timeout) for c in cases], ""


def failures(outcomes, cases):
    if outcomes is None:
        return len(cases)
    return sum(1 for o, c in zip(outcomes, cases, strict=True) if not same_outcome(c["expected"], o))


def gate(fdir, cfg):
    import coverage

    spec = json.loads((fdir / "spec.json").read_text())
    cases = json.loads((fdir / "cases.json").read_text())
    path = str(fdir / "candidate.py")
    source = Path(path).read_text()
    name, npos, timeout = spec["name"], spec["npos"], cfg["call_timeout"]
    parser, want_arcs, want_lines = targets(source, spec["body_first"], spec["last"])
    # two runs of the reference: cases whose outcome differs are nondeterministic
    stable = list(cases)
    for attempt in (1, 2):
        outcomes, err = run_cases(path, name, stable, npos, timeout, f"reference{attempt}")
        if outcomes is None:
            raise Abort("reference_import", err)
        stable = [c for c, o in zip(stable, outcomes, strict=True) if same_outcome(c["expected"], o)]
    unstable = len(cases) - len(stable)
    # coverage.py, branch mode, over the stable cases in one session
    cov = coverage.Coverage(branch=True, data_file=None, include=[path])
    cov.start()
    try:
        run_cases(path, name, stable, npos, timeout, "covered")
    finally:
        cov.stop()
    data = cov.get_data()
    arcs = translate(parser, data.arcs(path) or [])
    lines = {parser.first_line(n) for n in (data.lines(path) or [])}
    missing_arcs = sorted(want_arcs - arcs)
    missing_lines = sorted(want_lines - lines)
    light = cover(path, name, stable, npos, timeout, parser, want_arcs | {(n, n) for n in want_lines})
    variants = {}
    for label, text in spec.get("variants", {}).items():
        vpath = fdir / f"variant_{label}.py"
        vpath.write_text(text)
        outcomes, err = run_cases(str(vpath), name, stable, npos, timeout, f"variant_{label}")
        variants[label] = failures(outcomes, stable)
    return {
        "kept": [cases.index(c) for c in stable],
        "unstable": unstable,
        "branches": [len(want_arcs) - len(missing_arcs), len(want_arcs)],
        "lines": [len(want_lines) - len(missing_lines), len(want_lines)],
        "missing_arcs": missing_arcs,
        "missing_lines": missing_lines,
        "variants_failed": variants,
        "light": light,
    }


def cover(path, name, cases, npos, timeout, parser, goals):
    """A lightweight suite: a greedy set cover of the cases keeping every branch arc and line
    (a line n as the pair (n, n)); indexes into `cases`."""
    fn = load(path, name, "light")
    tracer = ArcTracer(path)
    reach = []
    for case in cases:
        tracer.run(lambda case=case: call(fn, case["inputs"], npos, timeout))
        arcs = translate(parser, tracer.arcs)
        lines = {(n, n) for arc in arcs for n in arc if n > 0}
        reach.append((arcs | lines) & goals)
    chosen, left = [], set().union(*reach) if reach else set()
    while left:
        best = max(range(len(reach)), key=lambda i: len(reach[i] & left))
        chosen.append(best)
        left -= reach[best]
    return sorted(chosen)


# driver ----------------------------------------------------------------------------------
def child(mode, fdir):
    cfg = json.loads((fdir.parent / "config.json").read_text())
    sys.setrecursionlimit(3000)
    try:
        result = (explore if mode == "explore" else gate)(fdir, cfg)
    except Abort as exc:
        result = {"drop": exc.reason, "detail": exc.detail}
    except Exception as exc:
        result = {"drop": "runner_error", "detail": f"{type(exc).__name__}: {exc}"[:1000]}
    (fdir / f"{mode}.json").write_text(json.dumps(result))


def drive(mode, root, timeout, jobs):
    def one(fdir):
        out = fdir / f"{mode}.json"
        out.unlink(missing_ok=True)
        try:
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), mode, str(fdir)],
                capture_output=True,
                timeout=timeout,
                # another hash seed at the gate: set and str-hash order changes show as unstable
                env=dict(os.environ, PYTHONHASHSEED="0" if mode == "explore" else "1"),
                check=False,
            )
        except subprocess.TimeoutExpired:
            out.write_text(json.dumps({"drop": "hang", "detail": f"the function's run passed {timeout}s"}))
            return
        if not out.exists():
            detail = (proc.stderr or b"").decode(errors="replace")[-1000:]
            out.write_text(json.dumps({"drop": "crash", "detail": f"exit {proc.returncode}: {detail}"}))

    import resource

    dirs = sorted(p for p in root.iterdir() if (p / "spec.json").is_file())
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, dirs))
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    (root / f"{mode}-usage.json").write_text(json.dumps({"cpu_seconds": usage.ru_utime + usage.ru_stime}))


def main():
    if sys.argv[1] == "drive":
        mode, root = sys.argv[2], Path(sys.argv[3])
        timeout = float(sys.argv[sys.argv.index("--timeout") + 1])
        jobs = int(sys.argv[sys.argv.index("--jobs") + 1])
        drive(mode, root, timeout, jobs)
    else:
        child(sys.argv[1], Path(sys.argv[2]))


if __name__ == "__main__":
    main()
