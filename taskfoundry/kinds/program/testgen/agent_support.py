"""The sandbox side of the agent generator: its config, the workspace, pytest runs and coverage.

A `Workspace` is the agent's directory in the build sandbox (`eval/tests` with `tfrun.py`),
plus what the generator does there: run the tests against any executable and read JUnit,
collect test names, and measure coverage of the coverage build (whole suite or per test).
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskfoundry.agent import CoverageFeedback, Round
from taskfoundry.assets import asset
from taskfoundry.builders.build import COV_ROOT, COVERAGE, GOLD
from taskfoundry.errors import TaskfoundryError
from taskfoundry.grading.junit import TestOutcome, parse_junit
from taskfoundry.kinds.program.filter.dummies import render_dummy
from taskfoundry.kinds.program.testgen.probes import RUNNER_PATH, install_runner
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.linters import lint_source
from taskfoundry.naming import junit_id, junit_name
from taskfoundry.sandbox.base import Sandbox

log = logging.getLogger(__name__)

Lines = dict[str, set[int]]
PLUGIN_PATH = "/tmp/tf_agent_cov.py"  # assets/agent_cov.py: per-test coverage (pytest plugin)
TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")
# no bytecode in the tests dir; no third-party plugins (their start-up is most of a small run)
QUIET_PYTEST = {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


class SuiteRunError(TaskfoundryError):
    """pytest did not finish or wrote no report: told to the agent, never a verdict."""


@dataclass(frozen=True)
class Layout:
    """Sandbox paths. `prefix` is put before absolute paths that commands see: empty in a
    container, a LocalSandbox's root in tests (its commands run on the host)."""

    prefix: str = ""
    python: str = "python3"
    gold: str = GOLD
    cov: str = COVERAGE
    cov_root: str = COV_ROOT
    workdir: str = "/tmp/tf-agent"
    scratch: str = "/tmp/tf-agent-scratch"

    @property
    def tests_dir(self) -> str:
        return f"{self.workdir}/eval/tests"

    @property
    def suite_dir(self) -> str:
        """Where a revision run finds the suite written before (pytest does not collect it)."""
        return f"{self.workdir}/suite"

    def cmd(self, path: str) -> str:
        return self.prefix + path


def coverage_feedback(covered: Lines, total: Lines, detail: str = "") -> CoverageFeedback:
    n_total = sum(len(lines) for lines in total.values())
    n_cov = sum(len(covered.get(f, set()) & lines) for f, lines in total.items())
    missed = {f: lines - covered.get(f, set()) for f, lines in total.items()}
    percent = 100.0 * n_cov / n_total if n_total else 0.0
    return CoverageFeedback.from_missed(percent, {f: m for f, m in missed.items() if m}, detail)


class Workspace:
    """The agent's working directory in the sandbox, and the runs the generator makes there."""

    def __init__(
        self,
        sandbox: Sandbox,
        layout: Layout,
        coverage: str,
        go_module: str,
        timeout: float,
        exclude: tuple[str, ...] = (),
        argv0: str = WORKSPACE_EXECUTABLE,
    ) -> None:
        self.sandbox, self.layout, self.kind = sandbox, layout, coverage
        self.go_module, self.timeout, self.exclude = go_module, timeout, exclude
        self.argv0 = argv0  # what the program is called as (cleanroom.called_as)

    @property
    def has_coverage(self) -> bool:
        return self.kind != "none"

    def prepare(self) -> None:
        """Make the tests dir (as the sandbox user, so the agent may write) and the helpers."""
        lay = self.layout
        self._sh(["mkdir", "-p", lay.cmd(lay.tests_dir), lay.cmd(lay.scratch)], workdir="/")
        self.sandbox.put_file(asset("grading/tfrun.py"), f"{lay.tests_dir}/tfrun.py")
        install_runner(self.sandbox)
        self.sandbox.put_file(asset("program/agent_cov.py"), PLUGIN_PATH)

    def _sh(self, argv: Sequence[str], stdin: bytes | None = None, workdir: str | None = None) -> str:
        res = self.sandbox.exec(
            list(argv), timeout=self.timeout, stdin=stdin, workdir=workdir or self.layout.workdir
        )
        if not res.ok:
            raise SuiteRunError(f"{argv[0]} failed ({res.exit_code}): {res.text()[-1500:]}")
        return res.stdout.decode(errors="replace")

    def put_files(self, files: Mapping[str, str], directory: str) -> None:
        """Text files into `directory` (a sandbox path), readable by the agent."""
        self._sh(["mkdir", "-p", self.layout.cmd(directory)], workdir="/")
        for name, text in files.items():
            self.sandbox.put_file(text.encode(), f"{directory}/{name}")

    def put_executable(self, name: str, data: bytes) -> str:
        """Write an executable (a dummy) into scratch; its path as commands see it."""
        path = f"{self.layout.scratch}/{name}"
        self.sandbox.put_file(data, path, mode=0o755)
        return self.layout.cmd(path)

    # pytest ---------------------------------------------------------------------------
    def pytest(
        self, executable: str, env: Mapping[str, str] | None = None, extra: Sequence[str] = ()
    ) -> dict[str, TestOutcome]:
        """Run the suite against `executable`; JUnit name -> outcome. A file that does not
        import shows up as `.eval.tests.<module>` (an empty classname)."""
        return self.pytest_many({"run": executable}, env, extra)["run"]

    def pytest_many(
        self, executables: Mapping[str, str], env: Mapping[str, str] | None = None, extra: Sequence[str] = ()
    ) -> dict[str, dict[str, TestOutcome]]:
        """The suite against each executable, as parallel pytest processes in one exec."""
        outs = {label: f"{self.layout.scratch}/run-{uuid.uuid4().hex[:10]}" for label in executables}
        lines = [self._pytest_line(exe, outs[label], env or {}, extra) for label, exe in executables.items()]
        script = "\n".join([*lines, "wait"])
        res = self.sandbox.exec(script, timeout=self.timeout, workdir=self.layout.workdir)
        if res.timed_out:
            raise SuiteRunError(f"the tests did not finish in {self.timeout:g}s (a test hangs?)")
        return {label: self._report(out) for label, out in outs.items()}

    def _pytest_line(self, executable: str, out: str, env: Mapping[str, str], extra: Sequence[str]) -> str:
        lay = self.layout
        full_env = {
            **QUIET_PYTEST,
            "TF_EXECUTABLE": executable,
            "TF_ARGV0": self.argv0,
            "PYTHONPATH": lay.cmd("/tmp"),
            **env,
        }
        argv = [
            "env",
            *(f"{k}={v}" for k, v in full_env.items()),
            *self._pytest_argv(),
            "-o",
            "junit_family=xunit2",
            f"--junitxml={lay.cmd(out)}.xml",
            f"--basetemp={lay.cmd(out)}.tmp",
            *extra,
        ]
        return f"{shlex.join(argv)} >{shlex.quote(lay.cmd(out) + '.log')} 2>&1 &"

    def _report(self, out: str) -> dict[str, TestOutcome]:
        try:
            return parse_junit(self.sandbox.get_file(f"{out}.xml"))
        except FileNotFoundError:
            try:
                tail = self.sandbox.get_file(f"{out}.log").decode(errors="replace")[-1500:]
            except FileNotFoundError:
                tail = "(no output)"
            raise SuiteRunError(f"pytest wrote no report: {tail}") from None

    def _pytest_argv(self) -> list[str]:
        return [
            self.layout.python,
            "-m",
            "pytest",
            "eval/tests",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir=.",
            "--continue-on-collection-errors",
        ]

    def collect(self) -> tuple[list[str], set[str]]:
        """JUnit names of the collected tests, and the test files that failed to collect."""
        res = self.sandbox.exec(
            [*self._pytest_argv(), "--collect-only"],
            timeout=self.timeout,
            env=QUIET_PYTEST,
            workdir=self.layout.workdir,
        )
        text = res.stdout.decode(errors="replace")
        names = [
            junit_id(line.strip())
            for line in text.splitlines()
            if line.startswith("eval/tests/") and "::" in line
        ]
        broken = {m.split("/")[-1] for m in re.findall(r"^ERROR (eval/tests/\S+\.py)", text, re.M)}
        return names, broken

    def read_files(self) -> tuple[dict[str, str], list[str]]:
        """Test files in the tests dir ({name: text}) and other files the agent left there."""
        with tempfile.TemporaryDirectory(prefix="tf-agent-read-") as tmp:
            try:
                self.sandbox.get_dir(self.layout.tests_dir, Path(tmp))
            except FileNotFoundError:
                return {}, []
            paths = [p for p in sorted(Path(tmp).rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
            rel = {p.relative_to(tmp).as_posix(): p for p in paths}
            tests = {
                n: p.read_text(errors="replace")
                for n, p in rel.items()
                if TEST_FILE.match(n) and "/" not in n
            }
        others = [n for n in rel if n not in tests and n != "tfrun.py"]
        return tests, others

    # coverage -------------------------------------------------------------------------
    def _job(self, **extra: str) -> bytes:
        lay = self.layout
        job = {
            "coverage": self.kind,
            "cov_root": lay.cmd(lay.cov_root),
            "executable": lay.cmd(lay.cov),
            "go_module": self.go_module,
            "exclude": list(self.exclude),
            **extra,
        }
        return json.dumps(job).encode()

    def _fresh_dir(self, name: str) -> str:
        path = self.layout.cmd(f"{self.layout.scratch}/{name}-{uuid.uuid4().hex[:10]}")
        self._sh(["mkdir", "-p", path])
        return path

    def measure(self) -> CoverageFeedback:
        """The whole suite on the coverage build, one fresh coverage dir: the `coverage` tool."""
        covdir = self._fresh_dir("cov")
        env = {"TF_COV_DIR": covdir, "TF_COV_KIND": self.kind}
        outcomes = self.pytest(self.layout.cmd(self.layout.cov), env, extra=("-p", "tf_agent_cov"))
        out = self._sh(
            [self.layout.python, self.layout.cmd(RUNNER_PATH), "--read-coverage"],
            stdin=self._job(covdir=covdir),
            workdir="/tmp",
        )
        data = json.loads(out)
        passed = sum(o.status == "passed" for o in outcomes.values())
        detail = (
            f"{passed} of {len(outcomes)} tests passed on the coverage build. Paths are relative to /src."
        )
        return coverage_feedback(_sets(data["covered"]), _sets(data["total"]), detail)

    def per_test(self) -> dict[str, tuple[Lines, Lines]]:
        """JUnit name -> (covered, total): one coverage dir per test, via the plugin."""
        base = self._fresh_dir("pertest")
        env = {"TF_COV_BASE": base, "TF_COV_KIND": self.kind}
        self.pytest(self.layout.cmd(self.layout.cov), env, extra=("-p", "tf_agent_cov"))
        out = self._sh(
            [self.layout.python, self.layout.cmd(PLUGIN_PATH)], stdin=self._job(base=base), workdir="/tmp"
        )
        raw: dict[str, Any] = json.loads(out)
        return {junit_id(node): (_sets(v["covered"]), _sets(v["total"])) for node, v in raw.items()}


def _sets(data: Mapping[str, list[int]]) -> Lines:
    return {name: set(lines) for name, lines in data.items()}


# review: the feedback hook ------------------------------------------------------------
DUMMY_TEXT = {
    "silent": "exits 0, prints nothing",
    "fail": "exits 1, prints nothing",
    "echo": "prints its arguments",
    "cat": "copies stdin to stdout",
    "usage": "prints the usage text, exits 0",
    "usage-err": "prints the usage text on stderr, exits 1",
}
REVISE = (
    "Review of your tests; the same checks decide which tests are kept. Fix or delete each test "
    "below, run the tests on the reference again, then submit again.\n"
)


class Reviewer:
    """After each submit: HIGH lint findings, tests failing on gold, tests passing a dummy."""

    def __init__(self, ws: Workspace, dummies: Sequence[str], usage: str, limit: int = 40) -> None:
        self.ws, self.limit = ws, limit
        self.dummies = {name: render_dummy(name, usage) for name in dummies}

    def __call__(self, round_: Round) -> list[str]:
        notes = self.notes()
        if not notes:
            return []
        shown = notes[: self.limit]
        more = f"\n(and {len(notes) - len(shown)} more)" if len(notes) > len(shown) else ""
        return [REVISE + "\n".join(f"- {note}" for note in shown) + more]

    def notes(self) -> list[str]:
        files, others = self.ws.read_files()
        notes = [
            f"eval/tests/{name} is not shipped with the suite (only test files are): inline what "
            "the tests need, then delete it"
            for name in others
        ]
        notes += lint_notes(files)
        try:
            notes += self._run_notes()
        except SuiteRunError as exc:
            notes.append(f"the tests could not be run to the end: {exc}")
        return notes

    def _run_notes(self) -> list[str]:
        lay = self.ws.layout
        dummies = {d: self.ws.put_executable(f"dummy-{d}", script) for d, script in self.dummies.items()}
        targets = {"gold": lay.cmd(lay.gold), **{f"dummy-{d}": p for d, p in dummies.items()}}
        runs = self.ws.pytest_many(targets)
        notes = [_gold_note(name, o) for name, o in runs["gold"].items() if o.status != "passed"]
        passing: dict[str, list[str]] = {}
        for dummy in dummies:
            for name in (n for n, o in runs[f"dummy-{dummy}"].items() if o.status == "passed"):
                passing.setdefault(name, []).append(f"`{dummy}`: {DUMMY_TEXT.get(dummy, 'a decoy')}")
        notes += [
            f"{name} passes on decoy programs ({'; '.join(found)}), so it checks nothing real"
            for name, found in passing.items()
        ]
        return notes


def _gold_note(name: str, outcome: TestOutcome) -> str:
    if name.startswith("."):
        return f"{name[1:]} cannot be imported: {outcome.message[:300]}"
    verb = "is skipped" if outcome.status == "skipped" else "fails"
    return f"{name} {verb} on the reference program: {outcome.message[:300]}"


def lint_notes(files: Mapping[str, str]) -> list[str]:
    """HIGH findings and parse errors of the linter, one line each."""
    notes: list[str] = []
    for name, text in sorted(files.items()):
        result = lint_source(text, path=f"eval/tests/{name}")
        notes += [f"eval/tests/{name} does not parse: {err.message}" for err in result.errors]
        notes += [
            f"{junit_name(name, f.test)} (line {f.line}) {f.rule}: {f.message}"
            for f in result.findings
            if f.severity == "HIGH"
        ]
    return notes
