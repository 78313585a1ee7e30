"""The explorer: the embedded generator that needs no model and no network.

It reads the usage text and README, enumerates commands, options and values,
runs probes against the coverage build, and keeps every probe that reaches new
lines (or a new combination of command and options). Kept probes are re-run on
the gold executable twice; those whose output is not reproducible are skipped.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from taskfoundry import progress
from taskfoundry.assets.grading.tfrun import TIMEOUT as TFRUN_SECONDS
from taskfoundry.errors import GenerationError
from taskfoundry.kinds.program.results import OriginCount
from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen import runtime_inputs
from taskfoundry.kinds.program.testgen.docexamples import Example
from taskfoundry.kinds.program.testgen.dummy_check import dummy_passing
from taskfoundry.kinds.program.testgen.help import HELP_FLAGS
from taskfoundry.kinds.program.testgen.inputs import Corpus, build_corpus, mutate_text, named_data, values_for
from taskfoundry.kinds.program.testgen.manpage import man_options
from taskfoundry.kinds.program.testgen.probes import (
    HARVESTED,
    Outcome,
    Probe,
    RunnerJob,
    family,
    install_runner,
    run_probes,
)
from taskfoundry.kinds.program.testgen.replay import (
    HELP_ARGS,
    VERSION_ARGS,
    ReplayTable,
    first_distinct,
    probe_key,
)
from taskfoundry.kinds.program.testgen.usage import Option, Usage, parse_usage, with_options
from taskfoundry.pipeline.secret import fresh_seed
from taskfoundry.sandbox.base import Sandbox

log = logging.getLogger(__name__)

CANARY = 4  # probes of the first batch run alone: a program that hangs fails fast
# a test's call gets at least this many times what the gold took (a busy grader runs slower)
HEADROOM = 4
CALL_FLOOR = 0.1  # seconds a kept call's check costs at least (the runner's spawn, its files)

# A crash report names the implementation (its files, lines, install path): no rebuild could
# match it, and it is not behaviour the docs promise. Python, Rust and Go shapes.
_TRACE = re.compile(
    r"^Traceback \(most recent call last\):$|^thread '[^']*' panicked at |"
    r"^goroutine \d+ \[|^panic: .*\n\n?goroutine ",
    re.M,
)


def runtime_trace(out: Outcome) -> bool:
    return any(_TRACE.search(text or "") for text in (out.stdout, out.stderr))


@dataclass
class Kept:
    probe: Probe
    outcome: Outcome
    feature: str
    covered: dict[str, set[int]] = field(default_factory=dict)
    new_lines: int = -1  # lines it reached first when the explorer kept it (-1: not measured)


@dataclass
class Exploration:
    kept: list[Kept] = field(default_factory=list)
    covered: dict[str, set[int]] = field(default_factory=dict)
    total: dict[str, set[int]] = field(default_factory=dict)
    probes_run: int = 0
    usage: dict[str, str] = field(default_factory=dict)  # command ('' for top level) -> help
    exhausted: str | None = None
    seconds: float = 0.0
    dummy_like: int = 0  # probes not kept because a dummy reproduces their output
    public_like: int = 0  # probes not kept because a worker can draw them (testgen.replay)
    replayed: int = 0  # probes not kept because the filter's replay dummy answers them as the gold
    printer_skipped: int = 0  # candidates not run: a word in them printed only --version/--help
    input_independent: int = 0  # kept tests the gold answers alike whatever their data
    input_independent_public: int = 0  # of those, the ones whose argv a public probe has (capped)
    traces: int = 0  # probes not kept because they print an interpreter's or runtime's trace
    spare: list[Kept] = field(default_factory=list)  # writable probes not kept: no new line
    origins: dict[str, OriginCount] = field(default_factory=dict)  # by family (probes.family)
    slow_timeout: float | None = None  # the probe time taken on for a slow program (None: not slow)

    def origin(self, probe: Probe) -> OriginCount:
        return self.origins.setdefault(family(probe.origin), OriginCount())

    def line_rate(self) -> float:
        tot = sum(len(v) for v in self.total.values())
        return sum(len(v) for v in self.covered.values()) / tot if tot else 0.0


# with the defences on, this share of random probes reads other records of the sample files: a
# table keyed by argv without file names (`shape`) answered 509 of logsum's 600 probes, whose
# files were the docs' own samples
SECRET_DATA = 0.5
DUAL = "dual"  # the origin of a call asked again with data a worker cannot know
PRINTER_RUNS = 3  # runs of a word that printed only the version or help text before it is skipped
ALIKE = 5  # the coverage build's distinct outcomes past which one gold outcome means a broken gold


def _gold_answers_all_alike(kept: list[Kept], explored: int, log_path: Path) -> None:
    """A gold that gives every kept probe one outcome, where the coverage build gave many, does
    not run the program: ansible-lint's zipapp found no `ansible` on PATH and answered all 23
    "Failed to find runtime dependency", while its coverage venv linted. Such a suite tests an
    error message alone. Fewer than ALIKE kept probes say nothing of the kind: asahi-nvram kept
    one after the gold's re-runs, and "all 1 alike" named a cause that was not there."""
    outcomes = {repr(k.outcome.signature) for k in kept}
    if len(outcomes) == 1 and len(kept) >= ALIKE and explored >= ALIKE:
        out = kept[0].outcome
        said = (out.stderr or out.stdout or "")[:300]
        raise GenerationError(
            f"the gold answered all {len(kept)} kept probes alike (exit {out.exit_code}: {said!r}), "
            f"where the coverage build gave {explored} outcomes: the gold does not run the program",
            log_path,
        )


def installed_data_names(sandbox: Sandbox) -> list[str]:
    """Stems of the data files the program's install put under share/ (figlet's fonts:
    `-f big`), from the build's runtime-data tar; docs and translations left out."""
    return runtime_inputs.data_names(runtime_inputs.installed_data(sandbox))


class Explorer:
    """One run writes one branch. Deterministic for a given seed and program."""

    def __init__(self, config: ExplorerConfig, job: RunnerJob, gold: str) -> None:
        self.config = config
        self.job = job
        self.gold = gold
        self._seed = config.seed if config.seed is not None else fresh_seed()
        self.rng = random.Random(self._seed)
        self.state = Exploration()
        self._seen: set[str] = set()
        self._features: set[str] = set()
        self._last_gain = 0  # probes run when a probe last reached a new line
        self._corpus = Corpus()
        self._harvested: Sequence[Probe] = ()
        self._free_runs = 0  # harvested probes run: outside the probe budget
        self._public: set[str] = set()  # replay keys of the public probes: never kept
        self._public_argv: set[tuple[str, ...]] = set()  # their argvs (a table's fallback keys)
        self._pending: list[Probe] = []  # duals of public probes that reached new lines
        self._printed: dict[tuple[str, ...], str] = {}  # --version, --help -> the gold's outcome
        self._printer_tokens: dict[str, list[int]] = {}  # argv word -> [printer-like, other] runs
        self._printer_words: set[str] = set()  # words that alone print the version or help text
        self._commands: set[str] = set()  # the program's commands (`logsum count`)
        self._replay: ReplayTable | None = None  # the filter's replay dummy's table

    def run(
        self,
        sandbox: Sandbox,
        repo: Path,
        names: set[str],
        usage: dict[str, str],
        log_path: Path,
        harvested: Sequence[Probe] = (),
        public_view: Path | None = None,
        replay: ReplayTable | None = None,
    ) -> Exploration:
        """Explore; every probe and its outcome goes to `log_path` (JSON lines). `names` are
        what the docs call the program; `usage` its help text by command (`capture_usage`);
        `harvested` the project's own tests' calls, run first; `public_view` the cleanroom's
        workspace on the host (what a worker reads: the public probes are drawn from it too);
        `replay` the filter's replay table (a probe it answers as the gold did is not kept)."""
        self._harvested = harvested
        self._replay = replay if self.config.no_logic else None
        start = time.monotonic()
        install_runner(sandbox)
        self.state.usage = dict(usage)
        data = runtime_data(sandbox)
        usages, corpus = self.prepare(data, repo, names, usage)
        self._corpus = corpus
        self._commands = set(usages.get("", Usage()).commands)
        limit = self.config.public_probes if self.config.no_logic else 0
        views = public_views(repo, data, public_view)
        public = public_probes_of(self.config, views, names, usage, limit)
        self._public = {probe_key(p) for p in public}
        self._public_argv = {p.args for p in public}
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("w") as plog:
            for batch in self._batches(self._with_duals(self._candidates(usages, corpus))):
                if self._budget_spent(start):
                    break
                if self.state.probes_run == 0:
                    outcomes = self._first_batch(sandbox, batch, plog, log_path)
                else:
                    outcomes = run_probes(sandbox, self._until(start), batch)
                _log_batch(plog, batch, outcomes)
                self._absorb(batch, outcomes)
                progress.count("probes", self.state.probes_run, self.config.max_probes)
        self._top_up()
        explored = {repr(k.outcome.signature) for k in self.state.kept}
        self._verify_on_gold(sandbox)
        self._cap_input_independent(sandbox)
        if not self.state.kept:
            raise GenerationError("no probe gave a reproducible result to test", log_path)
        _gold_answers_all_alike(self.state.kept, len(explored), log_path)
        self.state.seconds = time.monotonic() - start
        return self.state

    def prepare(
        self, data: RuntimeData, repo: Path, names: set[str], usage: dict[str, str], samples: bool = True
    ) -> tuple[dict[str, Usage], Corpus]:
        """The parsed usage by command and the corpus of inputs (`samples` false: none of the
        repository's sample files, only what the cleanroom shows)."""
        corpus = build_corpus(repo, names, self._seed, list(usage.values()), samples=samples)
        corpus.data_names, corpus.data_files, corpus.data_dirs = data.names, data.files, data.dirs
        usages = {cmd: parse_usage(text) for cmd, text in usage.items()}
        usages[""] = with_options(usages.get("", Usage()), man_options(repo))
        return usages, corpus

    def _first_batch(
        self, sandbox: Sandbox, batch: list[Probe], plog: TextIO, log_path: Path
    ) -> list[Outcome]:
        """The first batch, its first CANARY probes alone: a program that hangs fails after
        CANARY probe timeouts, not a whole batch's (40 × 5 s by default)."""
        head = run_probes(sandbox, self.job, batch[:CANARY])
        if all(o.timed_out for o in head):
            head = self._slow_canary(sandbox, batch[:CANARY], head, plog, log_path)
        return self._slow_retry(sandbox, batch, head + run_probes(sandbox, self.job, batch[CANARY:]))

    def _slow_canary(
        self, sandbox: Sandbox, canary: list[Probe], head: list[Outcome], plog: TextIO, log_path: Path
    ) -> list[Outcome]:
        """Every canary timed out: the program gets them again with `slow_probe_timeout` before
        it counts as hanging. ansible-lint's `--help` on its coverage build took over 5 s while
        another build ran, and the whole source failed "the program hangs"."""
        cfg = self.config
        if cfg.slow_probe_timeout > self.job.timeout:
            slow = dataclasses.replace(self.job, timeout=cfg.slow_probe_timeout)
            head = run_probes(sandbox, slow, canary)
            if sum(not out.timed_out for out in head) * 2 >= len(canary):
                log.info(
                    "slow program: its first %d probes timed out; probes now get %gs",
                    len(canary),
                    slow.timeout,
                )
                self.job, self.state.slow_timeout = slow, slow.timeout
                return head
        _log_batch(plog, canary, head)
        again = (
            f" and again after {cfg.slow_probe_timeout:g}s"
            if cfg.slow_probe_timeout > self.job.timeout
            else ""
        )
        raise GenerationError(
            f"the first {len(head)} probes all timed out after {self.job.timeout:g}s{again}: "
            "the program hangs",
            log_path,
        )

    def _slow_retry(self, sandbox: Sandbox, batch: list[Probe], outcomes: list[Outcome]) -> list[Outcome]:
        """A slow program's probes given the longer time. ansible-lint takes 5 s to lint one
        file, gold or coverage build: every probe that linted ran out of the 5 s, and 20 tests
        were kept. When a share of the first batch timed out, a sample of those runs again with
        `slow_probe_timeout`; if most of it finishes, the explorer goes on with that time (a
        program that hangs on some inputs costs the sample, no more)."""
        cfg = self.config
        late = [i for i, out in enumerate(outcomes) if out.timed_out]
        if cfg.slow_probe_timeout <= self.job.timeout or len(late) < cfg.slow_share * len(batch):
            return outcomes
        slow = dataclasses.replace(self.job, timeout=cfg.slow_probe_timeout)
        sample = late[:CANARY]
        again = run_probes(sandbox, slow, [batch[i] for i in sample])
        if sum(not out.timed_out for out in again) * 2 < len(sample):
            return outcomes
        log.info(
            "slow program: %d of %d first probes timed out; probes now get %gs",
            len(late),
            len(batch),
            slow.timeout,
        )
        self.job, self.state.slow_timeout = slow, slow.timeout
        rest = late[CANARY:]
        redone = dict(zip(sample, again, strict=True))
        redone.update(zip(rest, run_probes(sandbox, slow, [batch[i] for i in rest]), strict=True))
        return [redone.get(i, out) for i, out in enumerate(outcomes)]

    def _budget_spent(self, start: float) -> bool:
        cfg = self.config
        runs, idle = self.state.probes_run - self._free_runs, self.state.probes_run - self._last_gain
        if runs >= cfg.max_probes * cfg.growth or (
            runs >= cfg.max_probes and idle >= cfg.max_probes * cfg.patience
        ):
            self.state.exhausted = "probes"
        elif max(time.monotonic() - start, 0.0) + self._verify_seconds() >= cfg.max_seconds:
            self.state.exhausted = "time"
        elif self.state.total and self.state.line_rate() >= cfg.coverage_target:
            self.state.exhausted = "coverage_target"
        elif len(self.state.kept) >= cfg.max_tests:
            self.state.exhausted = "tests"
        return self.state.exhausted is not None

    def _until(self, start: float) -> RunnerJob:
        """The job, with the wall clock past which the runner starts no probe: what `max_seconds`
        leaves after the gold's check of the kept tests. The budget is checked between batches,
        and one batch of a slow program's probes (40 × 20 s) runs minutes."""
        elapsed = max(time.monotonic() - start, 0.0)
        left = self.config.max_seconds - elapsed - self._verify_seconds()
        return dataclasses.replace(self.job, stop_at=time.time() + max(left, 0.0))

    def _verify_seconds(self) -> float:
        """What `_verify_on_gold` will take: every kept test twice, each as long as its call took
        on the coverage build (the gold's is no longer), two at a time where probes run so. The
        budget counts it: ufomerge's probes of 3 s (fontTools under coverage) ran generate past
        a 30-minute limit after exploring had stopped. It was a probe's whole share of the time
        so far before, the coverage read-out too: appstream-generator's gcov took 5 s a probe
        after a call of 0.3 s, and exploring stopped after 120 probes to save 300 s for a check
        that took 20."""
        calls = sum(max(k.outcome.seconds, CALL_FLOOR) for k in self.state.kept)
        return 2 * calls / self.job.parallel

    def _with_duals(self, candidates: Iterator[Probe]) -> Iterator[Probe]:
        """The candidates, each after the duals of the public probes that reached new lines; a
        candidate a worker can draw (a public probe) is not run: its dual with secret data runs
        in its place. Run and then left out, they took a quarter of logsum's probe budget (174
        of 680) and it kept 60 tests fewer than with the defence off."""
        for probe in candidates:
            while self._pending:
                yield self._pending.pop(0)
            if self._public_candidate(probe):
                self.state.public_like += 1
                yield from self._duals(probe)[-1:]  # the other numbers, names and data
                continue
            if probe.origin != HARVESTED and self._prints_only_version_or_help(probe):
                self.state.printer_skipped += 1
                continue
            yield probe

    def _batches(self, candidates: Iterator[Probe]) -> Iterator[list[Probe]]:
        batch: list[Probe] = []
        repeats = 0
        for probe in candidates:
            if probe.key in self._seen:
                repeats += 1
                if repeats > 5_000:  # the input space is used up
                    break
                continue
            repeats = 0
            self._seen.add(probe.key)
            batch.append(probe)
            if len(batch) >= self.config.batch:
                yield batch
                batch = []
        if batch:
            yield batch

    def _absorb(self, batch: list[Probe], outcomes: list[Outcome]) -> None:
        self.state.probes_run += sum(not out.not_run for out in outcomes)
        for probe, out in zip(batch, outcomes, strict=True):
            if out.not_run:  # past the deadline: it tells nothing
                continue
            self.state.origin(probe).probes += 1
            self._free_runs += probe.origin == HARVESTED
            for name, lines in out.total.items():
                self.state.total.setdefault(name, set()).update(lines)
            new = sum(len(lines - self.state.covered.get(n, set())) for n, lines in out.covered.items())
            feature = _feature(probe, out)
            if not out.writable:
                continue
            printer = self.config.no_logic and self._printer_like(probe, out)
            self._count_printer(probe, printer)
            if printer:
                self.state.dummy_like += 1  # the version or help printer passes its test
                continue
            public = self._public_candidate(probe)
            if public or (self._replay is not None and self._replay.replays(probe, out)):
                # a lookup table of the gold would pass its test: the filter's replay dummy drops
                # it, and lines credited to it went untested (17 of logsum's kept tests)
                self.state.public_like += public
                self.state.replayed += not public
                # its lines, reached again with data a worker cannot know; not a dual's duals:
                # replayed too, each reached the same uncredited lines and asked for more
                # (528 of logsum's 600 probes went to `count app-50f2-38018b-cdec85.log --bogus`)
                if new and probe.origin != DUAL:
                    self._pending.extend(self._duals(probe))
                continue
            seen = feature in self._features or self._features_full()
            if new == 0 and seen and not self._every_call(probe):
                if not runtime_trace(out) and not dummy_passing(probe, out, self.state.usage.get("", "")):
                    self.state.spare.append(Kept(probe, out, feature, out.covered, 0))
                continue
            if runtime_trace(out):
                self.state.traces += 1
                continue
            if dummy_passing(probe, out, self.state.usage.get("", "")):
                self.state.dummy_like += 1
                continue
            for name, lines in out.covered.items():
                self.state.covered.setdefault(name, set()).update(lines)
            if new:
                self._last_gain = self.state.probes_run
                self._corpus.add_output(probe, out)
            self._features.add(feature)
            self.state.kept.append(Kept(probe, out, feature, out.covered, new))

    def _public_candidate(self, probe: Probe) -> bool:
        """A candidate a worker can draw, other than the fixed `--version` and `--help` calls:
        those still run, for their outcomes are what `_printer_like` compares with."""
        fixed = probe.args in (VERSION_ARGS, HELP_ARGS) and not probe.stdin and not probe.files
        return probe.origin != HARVESTED and not fixed and probe_key(probe) in self._public

    def _prints_only_version_or_help(self, probe: Probe) -> bool:
        """Whether `probe` holds a word that alone prints the gold's `--version` or `--help`
        text and made it print that text every time it ran with others (PRINTER_RUNS at least),
        never anything else: logsum's `--version` after each command and option (`count
        --version FILE`). Such a call's test is one the version or help printer passes; run, they
        took a tenth of logsum's probe budget. (`--help` after a command prints that command's
        help: not skipped.)"""
        for word in set(probe.args) & self._printer_words:
            printer, other = self._printer_tokens.get(word, (0, 0))
            if printer >= PRINTER_RUNS and other == 0:
                return True
        return False

    def _count_printer(self, probe: Probe, printer: bool) -> None:
        if printer and len(probe.args) == 1 and not probe.stdin and not probe.files:
            self._printer_words.add(probe.args[0])
        for word in set(probe.args):
            self._printer_tokens.setdefault(word, [0, 0])[0 if printer else 1] += 1

    def _printer_like(self, probe: Probe, out: Outcome) -> bool:
        """Whether the gold's `--version` or `--help` outcome is this one: a program that prints
        it for every call passes the test (the filter's `version` and `help` dummies). The
        first such call records it (the fixed probes run first)."""
        if probe.args in (VERSION_ARGS, HELP_ARGS) and not probe.stdin and not probe.files:
            self._printed.setdefault(probe.args, repr(out.signature))
            return True
        return repr(out.signature) in self._printed.values()

    def _every_call(self, probe: Probe) -> bool:
        """The project's own tests as a suite (`harvest.only`): each of their calls is a test."""
        return self.config.harvest.only and probe.origin == HARVESTED

    def _features_full(self) -> bool:
        """Enough tests kept for option combinations alone: a program with many flags has more
        combinations than tests worth keeping, and the budget then goes to new lines."""
        alone = sum(1 for k in self.state.kept if k.new_lines == 0)
        return alone >= self.config.max_feature_tests

    def _top_up(self) -> None:
        """Up to `min_tests`, the probes that reached no new line and whose outcome no kept test
        has: each still pins what the program does with its own input."""
        seen = {repr(k.outcome.signature) for k in self.state.kept}
        for item in self.state.spare:
            if len(self.state.kept) >= self.config.min_tests:
                break
            if repr(item.outcome.signature) not in seen:
                seen.add(repr(item.outcome.signature))
                self.state.kept.append(item)

    def _verify_on_gold(self, sandbox: Sandbox) -> None:
        """Expected values come from the gold executable, run twice; unstable probes go."""
        probes = [k.probe for k in self.state.kept]
        gold = self._gold_job()
        first = run_probes(sandbox, gold, probes)
        second = run_probes(sandbox, gold, probes)
        kept = []
        slowest = 0.0
        for item, a, b in zip(self.state.kept, first, second, strict=True):
            if a.writable and a.signature == b.signature:
                kept.append(Kept(item.probe, a, item.feature, item.covered, item.new_lines))
                self.state.origin(item.probe).kept += 1
                self.state.origin(item.probe).new_lines += max(item.new_lines, 0)
                slowest = max(slowest, b.seconds)  # the second: a Python gold unpacks itself in the first
            else:
                log.info("skipping non-reproducible probe %s", item.probe.args)
        self.state.kept = kept
        self._slow_by_the_gold(slowest)

    def _cap_input_independent(self, sandbox: Sandbox) -> None:
        """Tests whose outcome does not depend on their data (the gold answers the same argv
        with other stdin and files alike: a usage error whatever the file holds) are what a
        table keyed by argv alone passes, where a worker can draw the argv. Each kept test with
        data runs once more on the gold with other data drawn from the seed; of those that
        answer alike, the ones whose argv a public probe has are kept up to
        `max_input_independent` of the suite, the ones that reached most lines first (an argv
        drawn with the secret seed is in no worker's table)."""
        cfg = self.config
        kept = self.state.kept
        with_data = [i for i, k in enumerate(kept) if has_data(k.probe)]
        if not with_data or cfg.max_input_independent >= 1:
            return
        gold = self._gold_job()
        probes = [other_data(kept[i].probe, self._corpus.texts, self.rng) for i in with_data]
        outs = run_probes(sandbox, gold, probes)
        alike = [
            i
            for i, probe, out in zip(with_data, probes, outs, strict=True)
            if probe.key != kept[i].probe.key and out.signature == kept[i].outcome.signature
        ]
        room = int(cfg.max_input_independent * len(kept))
        public = [i for i in alike if kept[i].probe.args in self._public_argv]
        over = set(sorted(public, key=lambda i: -kept[i].new_lines)[room:])
        self.state.input_independent = len(alike)
        self.state.input_independent_public = len(public)
        self.state.kept = [k for i, k in enumerate(kept) if i not in over]
        if over:
            log.info("%d tests answer alike whatever their data; %d over the cap go", len(alike), len(over))

    def _gold_job(self) -> RunnerJob:
        job = self.job
        return RunnerJob(executable=self.gold, timeout=job.timeout, parallel=job.parallel, argv0=job.argv0)

    def _slow_by_the_gold(self, slowest: float) -> None:
        """A program whose gold takes more than 1/HEADROOM of a test's call time on a kept test
        is slow, as if exploring had found it so, and its tests and mutants get the longer time.
        ansible-lint's gold took 3 to 5 s a call, and few enough of its probes ran out of 5 s
        that it was not slow: its tests gave each call tfrun's 10 s, and its reference graded
        0.62 beside another run, every failure a timeout."""
        cfg = self.config
        if self.state.slow_timeout is None and cfg.slow_probe_timeout > self.job.timeout:
            if slowest * HEADROOM > TFRUN_SECONDS:
                log.info("slow program: its gold took %.1fs on a kept probe; its tests get more", slowest)
                self.state.slow_timeout = cfg.slow_probe_timeout

    # candidate generation ----------------------------------------------------------
    def _candidates(self, usages: dict[str, Usage], corpus: Corpus) -> Iterator[Probe]:
        if self.config.harvest.only:
            yield from self._harvested
            return
        yield from (
            Probe(a)
            for a in [(), ("--help",), ("-h",), ("--version",), ("-V",), ("--no-such-option",), ("help",)]
        )
        yield from self._harvested
        yield from (p for ex in corpus.examples for p in _example_probes(ex, corpus))
        yield from (d for ex in corpus.examples for p in _example_probes(ex, corpus) for d in self._duals(p))
        top = usages.get("", Usage())
        commands: list[tuple[str, ...]] = [(c,) for c in top.commands] or [()]
        yield from self._with_shown_files(commands, corpus)
        for cmd in commands:
            opts = usages.get(cmd[0] if cmd else "", top).options + (top.options if cmd else [])
            yield from self._systematic(cmd, opts, corpus)
        while True:
            yield self._random_probe(commands, usages, top, corpus)

    def _with_shown_files(self, commands: list[tuple[str, ...]], corpus: Corpus) -> Iterator[Probe]:
        """The documented invocations, and each command bare and with an argument, again with
        the files the docs show in place (a config the program looks for where it runs)."""
        if not corpus.shown:
            return
        for example in corpus.examples:
            yield from (in_place(p, corpus.shown) for p in _example_probes(example, corpus))
        for cmd in commands:
            for args in (cmd, (*cmd, self._missing()), *((*cmd, n) for n in sorted(corpus.files)[:2])):
                yield in_place(self._with_files(args, corpus, "docs"), corpus.shown)

    def _systematic(self, cmd: tuple[str, ...], opts: list[Option], corpus: Corpus) -> Iterator[Probe]:
        names = sorted(corpus.files)
        yield Probe(cmd)
        yield Probe((*cmd, self._unknown_option()))
        for name in names:
            yield self._with_files((*cmd, name), corpus, "file")
            yield Probe(cmd, stdin=corpus.files[name], origin="stdin")
        yield from (Probe(cmd, stdin=blob, origin="bytes") for blob in corpus.blobs[:2])
        yield Probe((*cmd, self._missing()))
        for opt in opts:
            if opt.name in HELP_FLAGS:
                continue
            values = values_for(opt, corpus, self.rng) if opt.metavar or opt.choices else [None]
            for value in values:
                flag = (opt.name,) if value is None else (opt.name, value)
                target = (self.rng.choice(names),) if names else ()
                yield self._with_files((*cmd, *flag, *target), corpus, "option")
            if opt.metavar:
                yield Probe((*cmd, opt.name))  # missing value
        yield from self._every_data_value(cmd, opts, corpus)

    def _every_data_value(self, cmd: tuple[str, ...], opts: list[Option], corpus: Corpus) -> Iterator[Probe]:
        """Each installed data file and each copy of one, as the value of every option that
        takes a data file: each font parses and renders through its own paths."""
        names = sorted(corpus.files)
        takes_data = [o for o in opts if o.name not in HELP_FLAGS and named_data(o)]
        for value in corpus.data_values()[: self.config.max_data_values]:
            for opt in takes_data:
                target = (self.rng.choice(names),) if names else ()
                yield self._with_files((*cmd, opt.name, value, *target), corpus, "data")

    def _unknown_option(self) -> str:
        """An option the program does not know: `--bogus`, or with the defences on a secret word
        (the error names it, so no table holds the answer; `--bogus` is every worker's)."""
        return f"--{self._secret_word()}" if self.config.no_logic else "--bogus"

    def _missing(self) -> str:
        """A file that is not there: `missing-file.txt`, or with the defences on a secret name."""
        return f"missing-{self._secret_word()}.txt" if self.config.no_logic else "missing-file.txt"

    def _secret_word(self) -> str:
        return "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))

    def _random_probe(
        self, commands: list[tuple[str, ...]], usages: dict[str, Usage], top: Usage, corpus: Corpus
    ) -> Probe:
        rng = self.rng
        cmd = rng.choice(commands)
        opts = usages.get(cmd[0] if cmd else "", top).options + (top.options if cmd else [])
        opts = [o for o in opts if o.name not in HELP_FLAGS]
        argv: list[str] = list(cmd)
        for opt in rng.sample(opts, k=min(len(opts), rng.randint(1, 3))):
            argv.append(opt.name)
            if opt.metavar or opt.choices:
                argv.append(rng.choice(values_for(opt, corpus, rng)))
        names = sorted(corpus.files)
        roll = rng.random()
        stdin: str | bytes | None = None
        if corpus.texts and roll < 0.2:
            stdin, origin = rng.choice(corpus.texts), "hypothesis"
        elif corpus.blobs and roll < 0.27:
            stdin, origin = rng.choice(corpus.blobs), "bytes"
        elif corpus.outputs and roll < 0.37:
            stdin, origin = rng.choice(corpus.outputs), "output"
        elif names and rng.random() < 0.5:
            stdin, origin = mutate_text(corpus.files[rng.choice(names)], rng), "random"
        if stdin is not None:
            probe = Probe(tuple(argv), stdin=stdin, files=corpus.input_files(tuple(argv)), origin=origin)
        else:
            probe = self._with_files((*argv, rng.choice(names)) if names else tuple(argv), corpus, "random")
        if self.config.no_logic and rng.random() < SECRET_DATA:  # records a worker cannot know
            probe = other_data(probe, corpus.texts, rng)
        # a third of them with the files the docs show in place (the rng is not drawn without them)
        return in_place(probe, corpus.shown) if corpus.shown and rng.random() < 1 / 3 else probe

    def _duals(self, probe: Probe) -> list[Probe]:
        """A predictable call (documented, or one a worker draws with the public seeds) asked
        again with data a worker cannot know (MirrorCode's dual cases): the numbers in its
        arguments redrawn and the files its argv names renamed (their suffix and content kept),
        then also its stdin and those files' contents replaced by the secret seed's drawn
        texts. Knowing the call is then not knowing the answer."""
        numbers = other_names(other_numbers(probe, self.rng), self.rng)
        data = other_data(numbers, self._corpus.texts, self.rng)
        if data.key == probe.key and not has_data(probe):
            data = self._with_secret_file(probe)
        found = {p.key: dataclasses.replace(p, origin=DUAL) for p in (numbers, data) if p.key != probe.key}
        return list(found.values())

    def _with_secret_file(self, probe: Probe) -> Probe:
        """A call with no data to redraw (logsum's `count --by`) asked again with one more
        argument: a file under a secret name holding a secret text, after the command word.
        Where the file changes the outcome, it is a test no table holds; where it does not (a
        usage error whatever the file), the replay table's `shape` key (argv without its files'
        names) answers it as the public call, and it is not kept either."""
        corpus = self._corpus
        if not corpus.files or not corpus.texts:
            return probe
        name = Path(self.rng.choice(sorted(corpus.files))).name  # in the call's directory: renamed
        at = 1 if probe.args and probe.args[0] in self._commands else 0
        args = (*probe.args[:at], name, *probe.args[at:])
        named = other_names(Probe(args, files=((name, self.rng.choice(corpus.texts)),)), self.rng)
        return dataclasses.replace(named, stdin=probe.stdin, files=probe.files + named.files)

    @staticmethod
    def _with_files(argv: tuple[str, ...], corpus: Corpus, origin: str) -> Probe:
        return Probe(argv, files=corpus.input_files(argv), origin=origin)


@dataclass(frozen=True)
class RuntimeData:
    """The data files the program's install put under share/, as the corpus takes them."""

    names: list[str]
    files: dict[str, str | bytes]
    dirs: list[str]


def runtime_data(sandbox: Sandbox) -> RuntimeData:
    paths = runtime_inputs.installed_data(sandbox)
    return RuntimeData(
        runtime_inputs.data_names(paths),
        runtime_inputs.data_inputs(sandbox, paths),
        runtime_inputs.data_dirs(paths),
    )


def public_probes(
    config: ExplorerConfig,
    data: RuntimeData,
    repo: Path,
    names: set[str],
    usage: dict[str, str],
    limit: int,
) -> list[Probe]:
    """The probes an attacker draws with this code, the docs and each public seed: the first
    `limit` distinct candidates of each, without the repository's sample files (not in the
    cleanroom) and without the project's own tests' calls."""
    seen: set[str] = set()
    probes: list[Probe] = []
    for seed in config.public_seeds:
        attacker = Explorer(config.model_copy(update={"seed": seed}), RunnerJob(executable=""), "")
        usages, corpus = attacker.prepare(data, repo, names, usage, samples=False)
        probes += first_distinct(attacker._candidates(usages, corpus), limit, seen)
    return probes


NO_DATA = RuntimeData([], {}, [])


def public_views(repo: Path, data: RuntimeData, cleanroom: Path | None) -> list[tuple[Path, RuntimeData]]:
    """The trees and data files an attacker may draw public probes from: the cleanroom's
    workspace (what a worker reads), with the data files the program installs and without
    them; and the repository's own docs (what this project's generator reads). Drawn from the
    repository alone, libidn2's public set shared 2,307 of the 4,407 probes its cleanroom's
    docs give, and a lookup table of those passed 5.4% of its tests."""
    views = [(repo, data)]
    if cleanroom is not None:
        views.append((cleanroom, data))
        if data != NO_DATA:
            views.append((cleanroom, NO_DATA))
    return views


def public_probes_of(
    config: ExplorerConfig,
    views: Sequence[tuple[Path, RuntimeData]],
    names: set[str],
    usage: dict[str, str],
    limit: int,
) -> list[Probe]:
    """`public_probes` of each view, each probe once."""
    found: dict[str, Probe] = {}
    for tree, data in views:
        for probe in public_probes(config, data, tree, names, usage, limit):
            found.setdefault(probe.key, probe)
    return list(found.values())


def other_data(probe: Probe, texts: list[str], rng: random.Random) -> Probe:
    """`probe` with its text stdin and the text files its argv names redrawn: other records of
    the same data where it has a few lines (`other_lines`: the format kept, so the same code
    reads it), else a text drawn from `texts`."""
    named = set(probe.args)

    def redraw(text: str) -> str:
        if text.count("\n") >= MIN_LINES:
            return other_lines(text, rng)
        return rng.choice(texts) if texts else text

    files = tuple((n, redraw(c) if n in named and isinstance(c, str) else c) for n, c in probe.files)
    stdin = redraw(probe.stdin) if isinstance(probe.stdin, str) and probe.stdin else probe.stdin
    return dataclasses.replace(probe, stdin=stdin, files=files)


MIN_LINES = 3  # a text of this many lines is data whose records can be redrawn


def other_lines(text: str, rng: random.Random) -> str:
    """Other records of `text`: its first line (a header, if it has one), then some of the
    others in their order, one of them twice. A worker knows the sample file; which of its
    lines a test reads, and how often, it cannot enumerate (30 lines: 2^29 subsets)."""
    first, *rest = text.splitlines(keepends=True)
    rest[-1] = rest[-1] if rest[-1].endswith("\n") else rest[-1] + "\n"
    keep = sorted(rng.sample(range(len(rest)), rng.randint(1, max(1, len(rest) - 1))))
    picked = [rest[i] for i in keep]
    picked.insert(rng.randrange(len(picked) + 1), rest[rng.choice(keep)])
    return first + "".join(picked)


_NUMBER = re.compile(r"\d+")


def other_numbers(probe: Probe, rng: random.Random) -> Probe:
    """`probe` with each number in its arguments (not its options, not the files it writes)
    redrawn with as many digits: `sqrt(16)` becomes `sqrt(73)`, `-w 80` becomes `-w 31`."""
    files = {n for n, _ in probe.files}

    def redraw(match: re.Match[str]) -> str:
        digits = len(match[0])
        return str(rng.randrange(10 ** (digits - 1) if digits > 1 else 0, 10**digits))

    args = tuple(a if a.startswith("-") or a in files else _NUMBER.sub(redraw, a) for a in probe.args)
    return dataclasses.replace(probe, args=args)


def other_names(probe: Probe, rng: random.Random) -> Probe:
    """`probe` with each file its argv names renamed (`notes.txt` -> `notes-3f9a2c.txt`, the
    suffix and the content kept), in its argv and in the files it writes."""
    named = {n for n, _ in probe.files if n in probe.args and "/" not in n}
    if not named:
        return probe
    new = {n: f"{Path(n).stem}-{rng.getrandbits(24):06x}{Path(n).suffix}" for n in sorted(named)}
    args = tuple(new.get(a, a) for a in probe.args)
    return dataclasses.replace(probe, args=args, files=tuple((new.get(n, n), c) for n, c in probe.files))


def has_data(probe: Probe) -> bool:
    """Whether the call reads data besides its argv: stdin, or a file its argv names."""
    named = set(probe.args)
    return bool(probe.stdin) or any(n in named for n, _ in probe.files)


def in_place(probe: Probe, shown: dict[str, str]) -> Probe:
    """`probe` with the `shown` files in its directory too; a file it names stays its own."""
    named = {name for name, _ in probe.files}
    return dataclasses.replace(
        probe, files=probe.files + tuple((n, c) for n, c in shown.items() if n not in named)
    )


def _example_probes(example: Example, corpus: Corpus) -> list[Probe]:
    """A documented invocation as shown, with a sample file standing in for a named input."""
    probe = Explorer._with_files(example.argv, corpus, "docs")
    if example.stdin is not None:
        return [dataclasses.replace(probe, stdin=example.stdin)]
    if example.stdin_file is None:
        return [probe]
    suffix = Path(example.stdin_file).suffix
    same = sorted(n for n in corpus.files if Path(n).suffix == suffix)
    return [dataclasses.replace(probe, stdin=corpus.files[n]) for n in same[:3]]


def _log_batch(handle: TextIO, batch: list[Probe], outcomes: list[Outcome]) -> None:
    for probe, out in zip(batch, outcomes, strict=True):
        handle.write(
            json.dumps(
                {
                    "args": probe.args,
                    "stdin_bytes": len(probe.stdin),
                    "exit": out.exit_code,
                    "timed_out": out.timed_out,
                    "truncated": out.truncated,
                    "seconds": out.seconds,
                    "not_run": out.not_run,
                }
            )
            + "\n"
        )
    handle.flush()


def _feature(probe: Probe, out: Outcome) -> str:
    flags = sorted(a for a in probe.args if a.startswith("-"))
    head = probe.args[0] if probe.args and not probe.args[0].startswith("-") else ""
    return f"{head}|{','.join(flags)}|{'stdin' if probe.stdin else ''}|{out.exit_code}"
