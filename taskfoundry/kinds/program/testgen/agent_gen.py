"""The LLM-agent generator: an agent writes one branch of pytest tests inside the build sandbox.

Strategies (`agent.strategy`): `monolithic` (one run writes the whole suite), `decomposed`
(one run per area: args, config, help, I/O, subcommands, TUI) and `iterative` (the default:
rounds, each driven by the lines the suite has not reached yet). With `agent.harvest`, the
repository's own behavioral tests are pointed out and ported into the branch.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from taskfoundry import atomic
from taskfoundry.agent import (
    AgentConfig,
    AgentResult,
    AgentTask,
    CoverageFeedback,
    Model,
    make_model,
    run_agent,
)
from taskfoundry.agent.prompts import load_template
from taskfoundry.agent.schema import Budget
from taskfoundry.errors import GenerationError
from taskfoundry.kinds.program.settings import AgentGenConfig
from taskfoundry.kinds.program.testgen.agent_support import (
    Layout,
    Lines,
    Reviewer,
    SuiteRunError,
    Workspace,
    coverage_feedback,
)
from taskfoundry.kinds.program.testgen.base import GeneratedBranch, GenerationContext
from taskfoundry.naming import junit_file

log = logging.getLogger(__name__)

CONTEXT = """\
The program's repository, already built, is in /src: its source, docs and its own tests. /cov is
the same tree built with coverage instrumentation. The reference program is {gold}.

Write the tests with the shared helper `{tests_dir}/tfrun.py` (already there; do not change it):

    from tfrun import run

    def test_count_skips_header(tmp_path):
        \"\"\"CATCHES: a count that includes the header row.\"\"\"
        result = run(["count", "data.csv"], files={{"data.csv": "a\\n1\\n2\\n"}}, cwd=tmp_path)
        assert result.returncode == 0
        assert result.stdout == "2\\n"
        assert result.stderr == ""

`run(args, stdin="", files=None, cwd=None)` writes `files` (relative path -> text) into `cwd`,
runs the program with `args` and `stdin`, and returns `returncode`, `stdout` and `stderr` as text.
It runs the program named by $TF_EXECUTABLE, so the same tests grade the reference, rebuilds and
decoys: never name the program's path in a test. Run your tests on the reference with

    cd {workdir} && TF_EXECUTABLE={gold} python3 -m pytest eval/tests -q

The tests later run on a clean machine without /src, /cov or /task: put every input and expected
value in the test itself. Write flat files `eval/tests/test_*.py` importing only tfrun, pytest and
the standard library; no conftest.py, no helper modules, no data files."""

AREAS = {
    "args": "command-line options and arguments: each flag in its short and long forms, missing "
    "and invalid values, conflicting options, and their exit codes and error messages",
    "config": "configuration: config files, environment variables and defaults they change "
    "(if the program has none, submit without writing tests)",
    "help": "help, usage and version output: --help/-h of the program and of each subcommand, "
    "--version, and the usage errors",
    "io": "input and output: stdin versus file arguments, several files, empty and malformed "
    "input, output files, formats and encodings",
    "subcommands": "each subcommand (or mode) on typical inputs and on edge cases",
    "tui": "interactive or terminal behavior that can be driven through stdin "
    "(if the program has none, submit without writing tests)",
}
MONOLITHIC = (
    "Write the whole suite: every documented command, option, input format and error, "
    "one feature at a time, into files named after the feature (test_<feature>.py)."
)
FIRST_ROUND = MONOLITHIC + " Use the `coverage` tool to find what your tests do not reach yet."
NEXT_ROUND = """\
Round {n}. The tests directory already holds {files}. On the coverage build they reach
{percent:.1f}% of the lines. Lines not reached yet (paths relative to /src):
{uncovered}
Read the source at those lines, work out which inputs reach them, and add tests for them in new
files named test_r{n}_<feature>.py. Keep the existing tests unless the review asks otherwise."""
HARVEST = """\
The repository has its own tests that run the program: {paths}. Read them and port every case
that runs the program (its arguments, stdin, input files, expected output and exit status) into
tests in files named test_harvested*.py. Copy the inputs and expected outputs into the tests
(the tests run without /src) and check each one on the reference."""
SUITE_SO_FAR = """\
Your suite so far is in {path} ({names}), to read: it is not run again. Write only new tests
into the tests directory, in files whose names are not among those."""
TEST_DIRS = {"test", "tests", "t", "testsuite", "testing", "regress", "check"}
SCRIPT_SUFFIXES = {".sh", ".bash", ".bats", ".t", ".exp"}


def find_behavioral_tests(repo: Path, limit: int = 20) -> list[str]:
    """Shell-style test scripts under a test directory, relative to the repository root."""
    found = []
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        in_tests = any(part.lower() in TEST_DIRS for part in rel.parts[:-1])
        if ".git" not in rel.parts and in_tests and path.suffix in SCRIPT_SUFFIXES and path.is_file():
            found.append(rel.as_posix())
    return found[:limit]


def branch_name(strategy: str, model: str) -> str:
    return f"agent-{strategy}-{re.sub(r'[^A-Za-z0-9._]+', '-', model).strip('-') or 'model'}"


class RunRecord(BaseModel):
    """One agent run of a generation, as the report lists it."""

    label: str
    status: str
    exhausted: str | None = None
    error: str | None = None
    steps: int = 0
    revisions: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    trajectory: Path
    coverage_percent: float | None = Field(None, description="iterative: after the round")


class AgentGenReport(BaseModel):
    """<log_dir>/<branch>.json: what the generation did, run by run."""

    schema_version: int = 1
    branch: str
    strategy: str
    model: str
    harvested: list[str] = Field(default_factory=list)
    runs: list[RunRecord] = Field(default_factory=list)
    exhausted: str | None = None
    tests: int = 0
    left_out: list[str] = Field(default_factory=list, description="test files that did not collect")
    line_rate: float = Field(0.0, description="of the branch before lint and filter")
    coverage_error: str | None = None


class _Budget:
    """The generation's total step/cost/time budget, shared out over its runs."""

    def __init__(self, limits: AgentConfig, clock: Callable[[], float]) -> None:
        self.limits, self.clock, self.start = limits, clock, clock()
        self.steps, self.cost = 0, 0.0

    def spent(self) -> Budget | None:
        lim = self.limits
        if lim.step_limit is not None and self.steps >= lim.step_limit:
            return "steps"
        if lim.cost_limit is not None and self.cost >= lim.cost_limit:
            return "cost"
        if lim.time_limit is not None and self.clock() - self.start >= lim.time_limit:
            return "time"
        return None

    def share(self, runs_left: int) -> AgentConfig:
        """The loop's config for the next run: what is left, divided by the runs still to come."""
        lim, n = self.limits, max(runs_left, 1)
        update = {
            "step_limit": None if lim.step_limit is None else max(1, (lim.step_limit - self.steps) // n),
            "cost_limit": None if lim.cost_limit is None else (lim.cost_limit - self.cost) / n,
            "time_limit": None
            if lim.time_limit is None
            else (lim.time_limit - (self.clock() - self.start)) / n,
        }
        return lim.model_copy(update=update)

    def add(self, result: AgentResult) -> None:
        self.steps += result.steps
        self.cost += result.usage.cost_usd


class _Session:
    """One generation: the agent's runs in one workspace, under one budget."""

    def __init__(
        self,
        model: Model,
        ws: Workspace,
        cfg: AgentGenConfig,
        ctx: GenerationContext,
        clock: Callable[[], float],
    ) -> None:
        self.model, self.ws, self.cfg, self.clock = model, ws, cfg, clock
        self.name = branch_name(cfg.strategy, model.name)
        self.traj_dir = ctx.log_dir / "trajectories" / self.name
        self.budget = _Budget(cfg.budget, clock)
        self.report = AgentGenReport(branch=self.name, strategy=cfg.strategy, model=model.name)
        self.stopped = False
        self.usage = ctx.usage.get("", "")
        dummies = list(ctx.config.dummies)
        self.reviewer = Reviewer(ws, dummies, self.usage) if cfg.review else None
        lay = ws.layout
        context = CONTEXT.format(gold=lay.gold, tests_dir=lay.tests_dir, workdir=lay.workdir)
        self.task = AgentTask(
            workdir=lay.workdir,
            output_dir=lay.tests_dir,
            outputs=["test_*.py", "*_test.py"],
            system=load_template("taskfoundry.kinds.program.testgen", "system.md"),
            prompt=load_template("taskfoundry.kinds.program.testgen", "task.md"),
            variables={"executable": lay.gold, "tests_dir": lay.tests_dir, "context": context},
        )

    def mark(self, budget: str | None) -> None:
        self.report.exhausted = self.report.exhausted or budget

    def run(self, label: str, instructions: str, runs_left: int = 1) -> AgentResult | None:
        """One agent run; None when the budget is gone or an earlier run failed."""
        if self.stopped or (spent := self.budget.spent()) is not None:
            self.mark(None if self.stopped else spent)
            self.stopped = True
            return None
        path = self.traj_dir / f"{label}.json"
        result = run_agent(
            self.model,
            self.ws.sandbox,
            self.task.model_copy(update={"instructions": instructions}),
            self.budget.share(runs_left),
            trajectory_path=path,
            coverage=self.ws.measure if self.ws.has_coverage else None,
            feedback=self.reviewer,
            clock=self.clock,
        )
        self.budget.add(result)
        self.report.runs.append(
            RunRecord(
                label=label,
                status=result.status,
                exhausted=result.exhausted,
                error=result.error,
                steps=result.steps,
                revisions=result.revisions,
                cost_usd=result.usage.cost_usd,
                seconds=result.elapsed_s,
                trajectory=path,
            )
        )
        self.mark(result.exhausted)
        if result.status == "error":
            log.warning("agent run %s ended with an error: %s", label, result.error)
            self.mark("error")
            self.stopped = True
        return result


# strategies ---------------------------------------------------------------------------------
def _harvest_text(paths: list[str]) -> str:
    return HARVEST.format(paths=", ".join(f"/src/{p}" for p in paths)) if paths else ""


def monolithic(s: _Session, harvested: list[str]) -> None:
    s.run("monolithic", "\n\n".join(filter(None, [MONOLITHIC, _harvest_text(harvested)])))


def decomposed(s: _Session, harvested: list[str]) -> None:
    areas = (["harvested"] if harvested else []) + [a for a in s.cfg.areas if a in AREAS]
    for i, area in enumerate(areas):
        text = (
            _harvest_text(harvested)
            if area == "harvested"
            else (f"Write tests for one area only: {AREAS[area]}. Name the files test_{area}_*.py.")
        )
        if s.run(f"area-{area}", text, runs_left=len(areas) - i) is None:
            return


def iterative(s: _Session, harvested: list[str]) -> None:
    text = "\n\n".join(filter(None, [FIRST_ROUND, _harvest_text(harvested)]))
    best = -1.0
    for n in range(1, s.cfg.max_rounds + 1):
        result = s.run(f"round-{n}", text)
        if result is None or not s.ws.has_coverage or s.stopped:
            return
        try:
            feedback = s.ws.measure()
        except SuiteRunError as exc:
            log.warning("coverage after round %d failed: %s", n, exc)
            return
        s.report.runs[-1].coverage_percent = round(feedback.percent, 2)
        if feedback.percent >= s.cfg.coverage_target * 100 or feedback.percent - best < s.cfg.min_gain:
            return
        best = feedback.percent
        text = _next_round(n + 1, result.files, feedback)


def _next_round(n: int, files: list[str], feedback: CoverageFeedback, limit: int = 80) -> str:
    shown = feedback.uncovered[:limit]
    left = len(feedback.uncovered) - len(shown)
    more = [f"... and {left} more ranges"] if left > 0 else []
    return NEXT_ROUND.format(
        n=n,
        files=", ".join(files) or "no test files",
        percent=feedback.percent,
        uncovered="\n".join(shown + more),
    )


STRATEGIES: dict[str, Callable[[_Session, list[str]], None]] = {
    "monolithic": monolithic,
    "decomposed": decomposed,
    "iterative": iterative,
}


class AgentGenerator:
    """The `agent` generator. `model` and `layout` are for tests; by default the model comes
    from `config.agent.model` (its API key read from the environment here, at the edge)."""

    def __init__(
        self,
        model: Model | None = None,
        layout: Layout | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model, self.layout, self.clock = model, layout or Layout(), clock

    def _session(self, ctx: GenerationContext) -> _Session:
        cfg = ctx.config.agent
        ws = Workspace(
            ctx.sandbox,
            self.layout,
            ctx.recipe.coverage,
            ctx.go_module,
            cfg.suite_timeout,
            ctx.exclude,
            ctx.argv0,
        )
        ws.prepare()
        return _Session(self.model or make_model(cfg.model, os.environ), ws, cfg, ctx, self.clock)

    def generate(self, ctx: GenerationContext) -> GeneratedBranch:
        cfg = ctx.config.agent
        start = self.clock()
        session = self._session(ctx)
        harvested = find_behavioral_tests(ctx.repo) if cfg.harvest else []
        session.report.harvested = harvested
        log.info("agent generator: %s, harvesting %d test scripts", session.name, len(harvested))
        STRATEGIES[cfg.strategy](session, harvested)
        return _branch(session, ctx.log_dir / f"{session.name}.json", self.clock() - start)

    def revise(
        self, ctx: GenerationContext, suite: dict[str, str], request: str, label: str
    ) -> GeneratedBranch:
        """One more run on a branch already written (under the agent section's budget, reviewed
        as in generation): `request` is the run's instructions, and `suite` (its test files) is
        there to read, outside the tests dir. Returns the tests the run wrote; GenerationError
        when none collect."""
        start = self.clock()
        session = self._session(ctx)
        lay = session.ws.layout
        session.ws.put_files(suite, lay.suite_dir)
        names = ", ".join(sorted(suite)) or "no files"
        session.run(label, "\n\n".join([request, SUITE_SO_FAR.format(path=lay.suite_dir, names=names)]))
        return _branch(session, ctx.log_dir / f"{session.name}-{label}.json", self.clock() - start)


def _branch(s: _Session, report_path: Path, seconds: float) -> GeneratedBranch:
    """The test files that collect, their names and per-test coverage; the report written."""
    files, _ = s.ws.read_files()
    names, broken = s.ws.collect()
    files = {n: text for n, text in files.items() if n not in broken}
    tests = [t for t in names if junit_file(t) in files]
    per_test = _per_test(s) if tests else {}
    covered, total = _union(per_test[t] for t in tests if t in per_test)
    s.report.tests, s.report.left_out = len(tests), sorted(broken)
    s.report.line_rate = coverage_feedback(covered, total).percent / 100
    atomic.write_text(report_path, s.report.model_dump_json(indent=1))
    if not tests:
        raise GenerationError(f"the agent wrote no usable tests ({_outcome(s.report)})", report_path)
    per_lines = {t: {f: sorted(ls) for f, ls in per_test[t][0].items()} for t in tests if t in per_test}
    return GeneratedBranch(
        name=s.name,
        files=files,
        tests=tests,
        covered=covered,
        total=total,
        per_test_lines=per_lines,
        probes_run=sum(r.steps for r in s.report.runs),
        exhausted=s.report.exhausted,
        seconds=seconds,
    )


def _per_test(s: _Session) -> dict[str, tuple[Lines, Lines]]:
    if not s.ws.has_coverage:
        return {}
    try:
        return s.ws.per_test()
    except SuiteRunError as exc:  # the branch is still good; only its coverage is unknown
        log.warning("per-test coverage failed: %s", exc)
        s.report.coverage_error = str(exc)
        return {}


def _union(pairs: Iterable[tuple[Lines, Lines]]) -> tuple[Lines, Lines]:
    covered: Lines = {}
    total: Lines = {}
    for cov, tot in pairs:
        for acc, part in ((covered, cov), (total, tot)):
            for name, lines in part.items():
                acc.setdefault(name, set()).update(lines)
    return covered, total


def _outcome(report: AgentGenReport) -> str:
    runs = ", ".join(f"{r.label}: {r.status}{f' ({r.error})' if r.error else ''}" for r in report.runs)
    return runs or "no run started"
