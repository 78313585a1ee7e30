"""Mutation-guided generation: probes that tell a surviving mutant from the reference.

After a first analysis, the candidates are the probes that reach a survivor's line: first
those the generate stage ran (`from_spare`: the ones it did not keep, then the ones it kept),
then, for the lines none of them reaches, the explorer again (another seed) against the
coverage build, keeping what reaches those lines even when it reaches no new line. Each
survivor is then switched on in its worker's schema (or built alone) and those probes run
on it, with their neighbours (a number moved by one); a probe whose outcome differs from the
reference's is written as a test. The new tests go through the linter and the filter like
any other, join the suite, and the survivors are analysed again.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import re
import string
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from taskfoundry.errors import GenerationError
from taskfoundry.kinds.program.mutate.models import MutantRecord
from taskfoundry.kinds.program.mutate.pool import WorkerPool
from taskfoundry.kinds.program.mutate.select import source_path
from taskfoundry.kinds.program.mutate.worker import MutantWorker
from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen.explorer import Explorer, Kept, runtime_trace
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob
from taskfoundry.kinds.program.testgen.writer import render_tests
from taskfoundry.layout import COV_ROOT, COVERAGE, GOLD
from taskfoundry.mutation.operators import Mutant, mutants_of
from taskfoundry.naming import junit_name
from taskfoundry.sandbox.base import Sandbox

log = logging.getLogger(__name__)
Target = tuple[str, int]  # (file, line)
GUIDED_PREFIX = "test_mutants_"  # file names of the tests this step writes
VARIANT = "variant"  # a candidate probe with one number changed
SPARE = "spare"  # a candidate probe the generate stage ran and did not keep


@dataclass
class Quota:
    """Up to `per_target` probes for each target line."""

    targets: set[Target]
    per_target: int
    found: dict[Target, int] = field(default_factory=dict)

    def take(self, covered: dict[str, set[int]]) -> bool:
        """Whether a probe that covers `covered` reaches a target still short of probes (it
        is then counted for each such target)."""
        hit = {(f, n) for f, lines in covered.items() for n in lines if (f, n) in self.targets}
        wanted = [t for t in hit if self.found.get(t, 0) < self.per_target]
        for target in wanted:
            self.found[target] = self.found.get(target, 0) + 1
        return bool(wanted)

    def full(self) -> bool:
        return all(self.found.get(t, 0) >= self.per_target for t in self.targets)

    def unreached(self) -> set[Target]:
        return self.targets - set(self.found)


class TargetExplorer(Explorer):
    """The explorer, keeping up to `per_target` probes for each target line they reach."""

    def __init__(
        self, config: ExplorerConfig, job: RunnerJob, gold: str, targets: set[Target], per_target: int
    ) -> None:
        super().__init__(config, job, gold)
        self.quota = Quota(targets, per_target)

    def _absorb(self, batch: list[Probe], outcomes: list[Outcome]) -> None:
        self.state.probes_run += len(batch)
        for probe, out in zip(batch, outcomes, strict=True):
            if out.writable and not runtime_trace(out) and self.quota.take(out.covered):
                self.state.kept.append(Kept(probe, out, "guided", out.covered))

    def _budget_spent(self, start: float) -> bool:
        if self.quota.full():
            self.state.exhausted = "targets"
            return True
        return super()._budget_spent(start)


@dataclass
class Search:
    """What the search for killing probes found."""

    killers: dict[str, Kept] = field(default_factory=dict)  # mutant id -> a probe that kills it
    probes_run: int = 0
    candidates: int = 0  # probes kept because they reach a survivor's line


def candidate_probes(
    box: Sandbox,
    repo: Path,
    names: set[str],
    usage: dict[str, str],
    job: RunnerJob,
    config: ExplorerConfig,
    targets: set[Target],
    per_target: int,
    log_path: Path,
    public_view: Path | None = None,
) -> tuple[list[Kept], int]:
    """Probes that reach the `targets` lines (the explorer's search; `usage`: the help text
    the cleanroom captured; `public_view`: the cleanroom's workspace) and how many probes ran."""
    explorer = TargetExplorer(config, job, GOLD, targets, per_target)
    try:
        state = explorer.run(box, repo, names, usage, log_path, public_view=public_view)
    except GenerationError as exc:  # nothing reproducible reached a survivor's line
        log.info("guided exploration kept nothing: %s", exc)
        return [], explorer.state.probes_run
    return state.kept, state.probes_run


def from_spare(spare: list[Kept], targets: set[Target], per_target: int) -> tuple[list[Kept], set[Target]]:
    """Up to `per_target` of the generate stage's spare probes for each target line, in the
    order they ran, and the targets none of them reaches."""
    quota = Quota(targets, per_target)
    chosen = [Kept(k.probe, k.outcome, SPARE, k.covered) for k in spare if quota.take(k.covered)]
    return chosen, quota.unreached()


def survivors_of(records: list[MutantRecord], repo: Path) -> list[Mutant]:
    """The surviving mutants again, from their files (records keep no byte offsets)."""
    wanted = {r.id for r in records if r.status == "survived"}
    found: list[Mutant] = []
    for file in sorted({r.file for r in records if r.id in wanted}):
        found += [m for m in mutants_of(file, source_path(repo, file).read_bytes()) if m.id in wanted]
    return found


_NUMBER = re.compile(r"(?<![\w.])-?\d{1,9}(?![\w.])")


def boundary_values(mutant: Mutant) -> tuple[int, ...]:
    """A changed constant's value and its mutant's (`1470` -> `1471`): an input holding either,
    as a number or as a character, sits at the boundary the mutant moved."""
    if mutant.operator != "constant":
        return ()
    found = []
    for text in (mutant.original, mutant.replacement):
        try:
            found.append(int(re.sub(r"(?i)(?<=\d)[ul]+$|_|'", "", text), 0))
        except ValueError:
            return ()
    return tuple(dict.fromkeys(found))


def value_variants(text: str, values: tuple[int, ...]) -> list[str]:
    """The text with its first number set to each value, and each value taken as a character
    (a code point: a table of character ranges is tried at its edges) written where a class
    of character matters (`_class_positions`): next to a punctuation mark (CommonMark reads
    `a*b*` as emphasis and `a*"b"*` not: a delimiter's neighbour is classed), over its first
    character beyond ASCII (where a table was already read), its first letter, its marks."""
    out: list[str] = []
    number = _NUMBER.search(text)
    if number is not None:
        out += [text[: number.start()] + str(value) + text[number.end() :] for value in values]
    chars = [chr(v) for v in values if 0x21 <= v <= 0x10FFFF and not 0xD800 <= v <= 0xDFFF and v != 0x7F]
    for i in _class_positions(text):  # each place with both values first: a cap keeps pairs
        out += [text[:i] + char + text[i + 1 :] for char in chars]
    return [v for v in dict.fromkeys(out) if v != text]


def _class_positions(text: str) -> list[int]:
    """Where a character's class shows: the first letter after a punctuation mark inside a
    word (`foo*bar*`: which side of the mark is punctuation decides), the first after a mark
    and the first before one (a delimiter's neighbours), the first character beyond ASCII,
    the first letter, the first two punctuation marks."""

    def mark(i: int) -> bool:
        return 0 <= i < len(text) and text[i].isascii() and text[i] in string.punctuation

    letters = [i for i, c in enumerate(text) if c.isascii() and c.isalpha()]
    inner = next((i for i in letters if mark(i - 1) and i > 1 and text[i - 2].isalnum()), None)
    after = next((i for i in letters if mark(i - 1)), None)
    before = next((i for i in letters if mark(i + 1)), None)
    wide = next((i for i, c in enumerate(text) if not c.isascii()), None)
    marks = [i for i in range(len(text)) if mark(i)][:2]
    found = [inner, after, before, wide, letters[0] if letters else None, *marks]
    return [i for i in dict.fromkeys(found) if i is not None]


def neighbours(probe: Probe, limit: int = 20, values: tuple[int, ...] = ()) -> list[Probe]:
    """The probe with one number moved by one or set to 0, in an argument, on stdin or in an
    input file: the boundaries a flipped comparison or an off-by-one constant shows at (and,
    for a mutant that changed a constant, its two `values` as a number or a character: first).
    Then its input reshaped by one line (`line_variants`): where a loop bound, a count or a tie
    shows; and a letter of it written wide (`char_variants`)."""
    texts = sorted(_texts(probe), key=lambda t: t[0][0] == "arg")  # inputs before arguments
    valued: dict[str, Probe] = {}
    for where, text in texts:
        if not text.startswith("-"):
            for other in value_variants(text, values):
                variant = _with(probe, where, other)
                valued.setdefault(variant.key, variant)
    moved: dict[str, Probe] = {}
    for where, text in _texts(probe):
        for match in list(_NUMBER.finditer(text))[:4]:
            value = int(match.group())
            for new in dict.fromkeys((value + 1, value - 1, 0)):
                if new != value:
                    variant = _with(probe, where, text[: match.start()] + str(new) + text[match.end() :])
                    moved.setdefault(variant.key, variant)
    quarter, firsts, rest = limit // 4, list(valued.values()), list(moved.values())
    ordered = firsts[:quarter] + rest[:quarter] + firsts[quarter:] + rest[quarter:]  # both kinds
    numbers = list({p.key: p for p in ordered}.values())[: limit // 2]
    shaped: dict[str, Probe] = {}
    reshaped = [(w, v) for w, text in texts if w[0] != "arg" for v in line_variants(text)]
    wide = [(w, v) for w, text in texts if not text.startswith("-") for v in char_variants(text)]
    for where, other in [*reshaped, *wide]:
        variant = _with(probe, where, other)
        shaped.setdefault(variant.key, variant)
    return [*numbers, *list(shaped.values())[: limit - len(numbers)]]


# a letter as UTF-8 of two, three and four bytes: a decoder's every sequence length
_WIDE = ("é", "€", "𝄞")


def char_variants(text: str) -> list[str]:
    """The text with its first letter written as a character of two, three and four UTF-8
    bytes: where a decoder, a width count or a byte/character confusion shows."""
    first = next((i for i, c in enumerate(text) if c.isascii() and c.isalpha()), None)
    if first is None:
        return []
    return [text[:first] + wide + text[first + 1 :] for wide in _WIDE]


def line_variants(text: str) -> list[str]:
    """An input one line away: its first or last line dropped, its first line repeated (a
    count, a tie), its last line first (an order), no final newline, nothing at all."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return []
    last = lines[-1] if lines[-1].endswith("\n") else lines[-1] + "\n"
    out = [
        "".join(lines[1:]),
        "".join(lines[:-1]),
        lines[0] + text if lines[0].endswith("\n") else text,
        "".join([last, *lines[:-1]]),
        text.rstrip("\n"),
        "",
    ]
    return [v for v in dict.fromkeys(out) if v != text]


def _texts(probe: Probe) -> Iterator[tuple[tuple[str, int], str]]:
    yield from ((("arg", i), arg) for i, arg in enumerate(probe.args))
    if isinstance(probe.stdin, str):
        yield ("stdin", 0), probe.stdin
    yield from (
        (("file", i), content) for i, (_, content) in enumerate(probe.files) if isinstance(content, str)
    )


def _with(probe: Probe, where: tuple[str, int], text: str) -> Probe:
    kind, i = where
    if kind == "arg":
        return dataclasses.replace(probe, args=(*probe.args[:i], text, *probe.args[i + 1 :]), origin="guided")
    if kind == "stdin":
        return dataclasses.replace(probe, stdin=text, origin="guided")
    files = probe.files
    return dataclasses.replace(
        probe, files=(*files[:i], (files[i][0], text), *files[i + 1 :]), origin="guided"
    )


class Referee:
    """The reference's outcomes on probes. A probe whose two runs differ is unusable; the
    second run is paid only for a probe that tells a mutant apart (most tell none)."""

    def __init__(self, worker: MutantWorker) -> None:
        self.worker = worker
        self.known: dict[str, Outcome | None] = {}
        self.confirmed: set[str] = set()

    def variants(self, variants: list[Probe]) -> list[Kept]:
        """`variants` with the reference's outcome (their lines are not measured)."""
        probes = [v for v in variants if v.key not in self.known]
        for probe, ran in zip(probes, self.worker.reference(probes) if probes else [], strict=True):
            self.known[probe.key] = ran if ran.writable else None
        return [Kept(v, out, VARIANT, {}) for v in variants if (out := self.known.get(v.key)) is not None]

    def stable(self, found: list[Kept]) -> list[Kept]:
        """`found` without the variants whose second run on the reference differs from the first."""
        fresh = {k.probe.key: k.probe for k in found if k.feature == VARIANT}
        probes = [p for key, p in fresh.items() if key not in self.confirmed and self.known.get(key)]
        for probe, out in zip(probes, self.worker.reference(probes) if probes else [], strict=True):
            first = self.known.get(probe.key)
            if first is not None and out.writable and out.signature == first.signature:
                self.confirmed.add(probe.key)
            else:
                self.known[probe.key] = None
        return [k for k in found if k.feature != VARIANT or k.probe.key in self.confirmed]


def variants_of(parents: list[Kept], limit: int, values: tuple[int, ...] = ()) -> list[Probe]:
    """Up to `limit` neighbours of `parents`, taken from each parent in turn (the first
    neighbours of each are the likeliest to tell: a boundary value, a number moved by one)."""
    lists = [neighbours(k.probe, values=values) for k in parents]
    taken: dict[str, Probe] = {}
    for row in itertools.zip_longest(*lists):
        for probe in row:
            if probe is not None and len(taken) < limit:
                taken.setdefault(probe.key, probe)
    return list(taken.values())


#: mutants whose probes run in one exec of the probe runner: the deadline is looked at between
#: groups, and inside one the runner starts no probe past it (MutantWorker.stop_at)
GROUP = 16


def wall_clock(deadline: float) -> float:
    """`deadline` (time.monotonic()) as the probe runner's clock (time.time()); 0: none."""
    return time.time() + (deadline - time.monotonic()) if math.isfinite(deadline) else 0.0


def killers(
    worker: MutantWorker, mutants: list[Mutant], candidates: list[Kept], deadline: float, pool_size: int
) -> Iterator[tuple[str, Kept]]:
    """(mutant id, a probe whose outcome on it differs from the reference's): the candidates
    that reach its line, then their neighbours, `pool_size` probes a mutant at most, less
    those the watch build says leave it uninfected (`_infecting`). A group of mutants at a
    time, each step one run of the probe runner for the whole group. The line's probes fill
    half the pool at most: where many reach a line and none tells (cmark's table of
    punctuation, 140 tests a line), only a neighbour carries the value that would."""
    referee = Referee(worker)
    half = max(1, pool_size - pool_size // 2)
    reached = {m: near for m in mutants if (near := _reaching(m, candidates)[:half])}
    ordered = list(reached.items())
    worker.stop_at = wall_clock(deadline)
    try:
        for at in range(0, len(ordered), GROUP):
            if time.monotonic() > deadline:
                return
            yield from _group_killers(worker, referee, dict(ordered[at : at + GROUP]), pool_size)
    finally:
        worker.stop_at = 0.0


def _group_killers(
    worker: MutantWorker, referee: Referee, reached: dict[Mutant, list[Kept]], pool_size: int
) -> Iterator[tuple[str, Kept]]:
    group = list(_pools(worker, referee, reached, pool_size).items())
    ran = worker.outcomes_many([(m, [k.probe for k in pool]) for m, pool in group])
    telling = {m: _telling(pool, outs or []) for (m, pool), outs in zip(group, ran, strict=True)}
    referee.stable([k for ks in telling.values() for k in ks])  # one run; then all judged
    for m, found in telling.items():
        for kept in referee.stable(found)[:1]:
            if kept.feature == VARIANT:  # it runs the mutant's line, or it could not kill it
                kept = Kept(kept.probe, kept.outcome, VARIANT, {m.file: {m.line}})
            yield m.id, kept


def _pools(
    worker: MutantWorker, referee: Referee, reached: dict[Mutant, list[Kept]], pool_size: int
) -> dict[Mutant, list[Kept]]:
    """Each mutant's probes: those that reach its line, then their variants (one reference run
    for the group's), less the probes that leave it uninfected; mutants left with none dropped."""
    wanted = {m: variants_of(kept, pool_size - len(kept), boundary_values(m)) for m, kept in reached.items()}
    referee.variants([v for vs in wanted.values() for v in vs])  # one run; then all known
    pools = {
        m: list({k.probe.key: k for k in [*kept, *referee.variants(wanted[m])]}.values())
        for m, kept in reached.items()
    }
    return {m: pool for m, pool in _infecting(worker, pools).items() if pool}


def _infecting(worker: MutantWorker, pools: dict[Mutant, list[Kept]]) -> dict[Mutant, list[Kept]]:
    """Each watched mutant's pool less the probes whose run of the watch build never gives its
    expression another value: on them its program runs as the reference's, so they cannot
    tell it apart. One run of the watch build for every probe of the watched pools."""
    watched = {m: n for m in pools if (n := worker.switch(m)) is not None}
    probes = list({k.probe.key: k.probe for m in watched for k in pools[m]}.values())
    infects = worker.infections(probes) if probes else None
    if infects is None:
        return pools
    by_key = {p.key: found for p, found in zip(probes, infects, strict=True)}
    return {
        m: [k for k in pool if m not in watched or watched[m] in by_key[k.probe.key]]
        for m, pool in pools.items()
    }


def _reaching(mutant: Mutant, candidates: list[Kept]) -> list[Kept]:
    return [k for k in candidates if mutant.line in k.covered.get(mutant.file, ())]


def _telling(pool: list[Kept], outcomes: list[Outcome]) -> list[Kept]:
    """The probes of `pool` whose outcome differs from the reference's (a hang or a flood tells
    nothing a test could hold)."""
    return [
        kept
        for kept, out in zip(pool, outcomes, strict=False)
        if not out.timed_out and not out.truncated and out.signature != kept.outcome.signature
    ]


def search(
    pool: WorkerPool, mutants: list[Mutant], candidates: list[Kept], deadline: float
) -> dict[str, Kept]:
    """A killing probe for each mutant it can find one for, each on the worker that holds it."""
    size = pool.config.guided_pool

    def work(worker: MutantWorker, mine: list[Mutant]) -> dict[str, Kept]:
        return dict(killers(worker, mine, candidates, deadline, size))

    found: dict[str, Kept] = {}
    for part in pool.each(mutants, lambda m: m.id, work):
        found.update(part)
    return found


def guided_tests(
    found: dict[str, Kept], program: str, seed: int, timeout: float | None = None
) -> tuple[dict[str, str], dict[str, Kept]]:
    """Test files for the killing probes (one test a probe), and JUnit name -> its probe.
    `timeout`: each call's seconds, for a slow program (writer.call_timeout)."""
    unique = list({k.probe.key: k for k in found.values()}.values())
    files, written = render_tests(unique, program, seed, timeout)

    def guided(name: str) -> str:
        return GUIDED_PREFIX + name.removeprefix("test_")

    renamed = {guided(name): text for name, text in files.items()}
    names = {junit_name(guided(w.file), w.function): unique[w.kept] for w in written}
    return renamed, names


def coverage_job(
    recipe_coverage: str, go_module: str, exclude: tuple[str, ...], timeout: float, argv0: str, stop_at: float
) -> RunnerJob:
    return RunnerJob(
        stop_at=stop_at,
        argv0=argv0,
        executable=COVERAGE,
        coverage=recipe_coverage,
        cov_root=COV_ROOT,
        go_module=go_module,
        timeout=timeout,
        exclude=exclude,
    )
