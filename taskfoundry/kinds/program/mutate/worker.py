"""One container of the build image that builds and tests mutants.

The suite sits in /workspace/eval as it does in the cleanroom, and /workspace/executable
is the guard (assets/mutant_guard.py), which runs the program of the current mutant. With
schemata (`mutation.schemata`), the worker's mutants are built once into one program
(`schema_build`) and each is switched on in turn; a mutant the schema cannot hold is
rebuilt alone (`way: rebuild`). Either way the tests run in one long pytest session
(assets/mutant_session.py) as the grading harness runs them (`harness.suite`): with
isolation, as root with `eval/` sealed and each program call as its own uid (tfrun), else as
the worker; only the tests that reach the mutant's line, stopping at the first failure.
Builds run as root in /src. The test session itself is `session.TestSession`.
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from taskfoundry import progress
from taskfoundry.assets import asset
from taskfoundry.errors import MutationError
from taskfoundry.grading import scripts
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.models import MutantRecord
from taskfoundry.kinds.program.mutate.rebuild import MUTANT_DIR, PROGRAM, RebuildPlan, parse_sha
from taskfoundry.kinds.program.mutate.schema_build import GUARD_FAILED, SchemaBuild, Tree, build_schemata
from taskfoundry.kinds.program.mutate.select import Planned
from taskfoundry.kinds.program.mutate.session import (
    CURRENT,
    MARKS,
    ROOT,
    SCRATCH,
    Entry,
    TestSession,
    Verdict,
    node_id,
)
from taskfoundry.kinds.program.settings import MutationConfig
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob, install_runner, run_probes
from taskfoundry.kinds.program.testgen.stage import suite_argv0
from taskfoundry.layout import GOLD, WORKSPACE, WORKSPACE_EXECUTABLE
from taskfoundry.mutation.operators import Mutant, language_of
from taskfoundry.mutation.schemata import INFECTED
from taskfoundry.naming import junit_id
from taskfoundry.sandbox.base import ExecResult, Sandbox

log = logging.getLogger(__name__)
GUARD_SETTINGS = f"{MUTANT_DIR}/guard.conf"
GUARD_SOURCE = f"{MUTANT_DIR}/guard.c"
DROPPER_SOURCE = f"{MUTANT_DIR}/tfdrop.c"
DROPPER = "/usr/local/sbin/tfdrop"  # where tfrun looks for it (its DROPPER)
SCHEMA = f"{MUTANT_DIR}/schema"  # the program that holds the worker's mutant schemata
REFERENCE = f"{MUTANT_DIR}/reference"  # the reference's program, as the worker first built it
WATCH = f"{MUTANT_DIR}/watch"  # the reference, recording which mutants a run infects
UNINFECTED = "no test's run gives its expression another value (the watch build): it runs as the reference"
#: a rebuild this quick is worth it to check a schema survivor for equivalence, or a mutant
#: whose guard did not compile
CHEAP_REBUILD = 5.0
#: languages where a mutant whose guard does not compile does not compile alone either
TYPED_GUARDS = frozenset({"rust"})
PROBES_DIR = f"{SCRATCH}/probes"  # the guided probes' directories, on the scratch tmpfs
ALONE_DIR = f"{MUTANT_DIR}/alone"  # programs of mutants rebuilt alone, until their session
EQUIVALENT = "the stripped program is the reference's"
GO_EVERY_ERROR = 'export GOFLAGS="${GOFLAGS:+$GOFLAGS }-gcflags=./...=-e"\n'
HANG_FACTOR, MIN_TIMEOUT = 10.0, 1.0  # a mutant's program call: a hang past this (`_fit_timeout`)


class MutantWorker:
    def __init__(self, box: Sandbox, plan: RebuildPlan, config: MutationConfig, harness: EvalConfig) -> None:
        self.box, self.plan, self.config, self.harness = box, plan, config, harness
        self.tests = TestSession(box, config, harness)
        self.files: set[str] = set()
        self.argv0 = WORKSPACE_EXECUTABLE  # what the suite calls the program as (_put_suite)
        self.reference_sha: str | None = None
        self.rebuild_seconds = 0.0  # a rebuild's cost: the last one alone, else the schema's (0: none yet)
        self.schema = SchemaBuild()
        self.guard = "python"  # which guard stands in for the program: "c" or "python"
        self.timeout = config.program_timeout  # a mutant's program call: a hang past it
        self.unfaithful: set[str] = set()  # tests that fail on the schema program alone
        self._originals: dict[str, bytes] = {}
        self._current: str | None = None  # the file that now holds a mutant
        self._checked: set[str] = set()  # schema survivors already rebuilt for equivalence
        self._checking = 0.0  # seconds the equivalence check has spent, over the whole stage
        self.infects: dict[str, set[int]] = {}  # node id -> switches its runs infect (the watch build)
        self.stop_at = 0.0  # wall clock past which no probe of the guided search starts (0: none)

    def setup(self, suite: Path, mutants: Sequence[Mutant] = ()) -> None:
        """The suite, the guard, and with schemata on, `mutants` built into one program, the
        image's program standing for the reference; without, the reference rebuilt (which must
        succeed). A Rust crate's first build in a fresh container compiles all of it, and the
        schema build does that anyway: the reference is rebuilt only when a mutant built alone
        needs its hash (`_reference_sha`)."""
        self.tests.install()
        self._put_suite(suite)
        self._install_guard()
        self._guard_settings(self.config.program_timeout)
        self._seal()
        install_runner(self.box)  # for the probes of guided generation
        self._probe_dir()
        self._root(" && ".join(_named(p, self.argv0) for p in (PROGRAM, REFERENCE, SCHEMA, WATCH)), 60)
        if self.config.schemata and mutants:
            self._root(f"mkdir -p {MUTANT_DIR} && cp {shlex.quote(self.plan.executable)} {REFERENCE}", 60)
            self._build_schema(list(mutants))
        else:
            self._reference_sha()
            self._root(f"cp {PROGRAM} {REFERENCE}", 60)  # PROGRAM is whichever mutant was built last

    def _reference_sha(self) -> str:
        """The hash of the reference's stripped program as a rebuild here makes it, what a
        mutant built alone is compared with; rebuilt on first use, which must succeed."""
        if self.reference_sha is None:
            self._restore()
            start = time.monotonic()
            res = self._build()
            self.rebuild_seconds = time.monotonic() - start
            self.reference_sha = parse_sha(res.text())
            if not res.ok or self.reference_sha is None:
                raise MutationError(f"the reference does not rebuild in its image: {res.text()[-1500:]}")
        return self.reference_sha

    def _probe_dir(self) -> None:
        """The guided probes' directories (PROBES_DIR): only the probe runner's user, the
        box's default, may write there, so a program the session tests (its own uid) cannot
        leave files there for a later mutant."""
        who = self.box.exec("echo $(id -u):$(id -g)", timeout=30).stdout.decode().strip()
        self._root(f"mkdir -p {PROBES_DIR} && chown {who} {PROBES_DIR} && chmod 0755 {PROBES_DIR}", 60)

    def use_suite(self, suite: Path) -> None:
        """The tests of `suite` in place of the ones the worker has, sealed as before."""
        self._root(f"rm -rf {WORKSPACE}/eval", 60)
        self._put_suite(suite)
        self._seal()

    def _put_suite(self, suite: Path) -> None:
        self.files = {p.relative_to(suite).as_posix() for p in (suite / "eval").rglob("test_*.py")}
        self.argv0 = suite_argv0(suite)
        self.box.put_dir(suite / "eval", f"{WORKSPACE}/eval")

    def _guard_settings(self, timeout: float) -> None:
        settings = {
            "program": PROGRAM,
            "argv0": self.argv0,
            "timeout": f"{timeout:g}",
            "cap": self.config.output_cap,
            "marks": MARKS,
            "current": CURRENT,
            # under isolation each program call has a uid of its own: the guard kills what
            # the program left of it, and tfrun need not (TF_REAPED)
            "reap_from": self.harness.program_uid if self.harness.isolate else 0,
        }
        self.box.put_file("".join(f"{k}={v}\n" for k, v in settings.items()).encode(), GUARD_SETTINGS)

    def _install_guard(self) -> None:
        """The guard at the program's path: compiled from C where the image has a compiler
        (it runs once per program call, and starts in a millisecond where Python takes ten
        or more), else the Python one."""
        self.box.put_file(asset("program/mutant_guard.py"), WORKSPACE_EXECUTABLE, mode=0o755)
        if not self.config.compiled_guard:
            return
        self.box.put_file(asset("program/mutant_guard.c"), GUARD_SOURCE)
        res = self.box.exec(
            f"cc -O2 -o {GUARD_SOURCE}.bin {GUARD_SOURCE} && chmod 755 {GUARD_SOURCE}.bin "
            f"&& mv {GUARD_SOURCE}.bin {WORKSPACE_EXECUTABLE}",
            timeout=120,
            user=ROOT,
        )
        self.guard = "c" if res.ok else "python"
        if res.ok and self.harness.isolate:
            self._install_dropper()

    def _install_dropper(self) -> None:
        """tfrun's uid dropper (assets/grading/tfdrop.c), static where the C library allows:
        each program call then drops its uid in one small exec, not setpriv's 3 ms. Without
        it tfrun uses setpriv, so a failure here costs time only."""
        self.box.put_file(asset("grading/tfdrop.c"), DROPPER_SOURCE)
        out = f"{DROPPER_SOURCE}.bin"
        self.box.exec(
            f"(cc -O2 -static -o {out} {DROPPER_SOURCE} 2>/dev/null || cc -O2 -o {out} {DROPPER_SOURCE}) "
            f"&& chmod 755 {out} && mkdir -p {DROPPER.rsplit('/', 1)[0]} && mv {out} {DROPPER}",
            timeout=120,
            user=ROOT,
        )

    def _build_schema(self, mutants: list[Mutant]) -> None:
        def build() -> ExecResult:
            start = time.monotonic()
            res = self._build(every_error=True)
            if res.ok:
                # the reference's build in a fresh container may rebuild everything (a Rust
                # crate: 5-8 s); this one rebuilds the files with guards, more than a mutant
                # rebuilt alone does: the cost CHEAP_REBUILD is held against
                took = time.monotonic() - start
                self.rebuild_seconds = min(self.rebuild_seconds or took, took)
                self._root(f"cp {PROGRAM} {SCHEMA}", 60)
            return res

        def watch() -> ExecResult:
            res = self._build()
            if res.ok:
                self._root(f"cp {PROGRAM} {WATCH}", 60)
            return res

        tree = Tree(
            read=lambda f: self._original(self.plan.target(f)),
            write=self._write_file,
            build=build,
            watch=watch if self.config.infection else None,
        )
        self.schema = build_schemata(tree, mutants)
        # The sources are the reference's again, newer than what the schema build left, so
        # the next build (a mutant rebuilt alone) recompiles them: no build back is needed,
        # only the reference's program.
        self._root(f"cp {REFERENCE} {PROGRAM}", 60)

    def failing(self, tests: list[str]) -> set[str]:
        """Tests that fail on the rebuilt reference here: they cannot tell a mutant apart.
        With schemata, every test runs on the schema program with no mutant on, and only
        those that fail there run on the reference too."""
        if not tests:
            return set()
        nodes = tuple(self._node(t) for t in tests)
        if not self.schema.switches:
            failed, slowest = self._failed_on(Entry("reference", REFERENCE, 0, nodes, all=True))
            self._fit_timeout(slowest)
            return failed
        on_schema, slowest = self._on_schema(nodes)
        self._fit_timeout(slowest)
        again = tuple(self._node(t) for t in sorted(on_schema))
        on_reference = (
            self._failed_on(Entry("reference", REFERENCE, 0, again, all=True))[0] if again else set()
        )
        # e.g. a test that pins a line number the schema moved: its mutants are rebuilt alone
        self.unfaithful = on_schema - on_reference
        return on_reference

    def _on_schema(self, nodes: tuple[str, ...]) -> tuple[set[str], float]:
        """The tests that fail on the schema program with no mutant on, and the slowest one's
        seconds. With a watch build, they run on it first (it runs as the reference does), and
        what each infects is kept; those that fail there run on the schema program."""
        if not self.schema.watched:
            return self._failed_on(Entry("schema", SCHEMA, 0, nodes, all=True))
        verdict = self._verdict(Entry("schema", WATCH, 0, nodes, all=True, watch=INFECTED))
        self.infects |= {n: set(ids) for n, ids in (verdict.infects or {}).items()}
        again = tuple(n for n in nodes if n in verdict.failed)
        failed = self._failed_on(Entry("schema", SCHEMA, 0, again, all=True))[0] if again else set()
        return failed, verdict.slowest

    def _failed_on(self, entry: Entry) -> tuple[set[str], float]:
        """The tests of `entry` that fail, and the slowest one's seconds."""
        verdict = self._verdict(entry)
        return {junit_id(n) for n in verdict.failed}, verdict.slowest

    def _verdict(self, entry: Entry) -> Verdict:
        verdict = self.session([entry], deadline=None).get(entry.id)
        if verdict is None or verdict.status in ("timeout", "error"):
            detail = verdict.failed if verdict else "no result"
            raise MutationError(f"the suite does not run on the {entry.id} program: {detail}")
        return verdict

    def _fit_timeout(self, slowest: float) -> None:
        """A mutant's program call may take `HANG_FACTOR` times the slowest test on the
        unmutated program (at least `MIN_TIMEOUT`, at most `program_timeout`): a mutant that
        loops forever then costs a second, not the whole timeout, per test it hangs in."""
        self.timeout = min(self.config.program_timeout, max(MIN_TIMEOUT, HANG_FACTOR * slowest))
        self._guard_settings(self.timeout)

    def run_all(self, planned: list[Planned], deadline: float) -> tuple[list[MutantRecord], bool]:
        """Every planned mutant: those in the schema in one session, the rest rebuilt one
        by one. Records in plan order, and whether the deadline stopped it."""
        switches = {
            p.mutant.id: self.schema.switches[p.mutant.id]
            for p in planned
            if p.mutant.id in self.schema.switches and not self.unfaithful & set(p.tests)
        }
        records: dict[str, MutantRecord] = {}
        entries = {}
        for p in planned:
            if p.mutant.id in switches:
                entry = self._entry(p, switches[p.mutant.id])
                if entry.tests:
                    entries[p.mutant.id] = entry
                else:  # no test can tell it apart: it survives them all without a run
                    records[p.mutant.id] = _uninfected(p)
        found = self.session(list(entries.values()), deadline)
        progress.advance("mutants", len(found) + len(records))
        for p in planned:
            if p.mutant.id in found:
                records[p.mutant.id] = self._schema_record(p, found[p.mutant.id])
                if p.mutant.id in self.schema.watched:
                    records[p.mutant.id].infecting = len(entries[p.mutant.id].tests)
        out_of_time = len(found) < len(entries)
        if not out_of_time:
            alone = [p for p in planned if p.mutant.id not in switches]
            out_of_time = self._run_alone(alone, records, deadline)
        self._check_equivalence(planned, records, deadline)
        return [records[p.mutant.id] for p in planned if p.mutant.id in records], out_of_time

    def _run_alone(self, planned: list[Planned], records: dict[str, MutantRecord], deadline: float) -> bool:
        """The mutants the schema does not hold, each rebuilt alone, its program kept under
        ALONE_DIR; then all their tests in one session (a session each cost a second of
        pytest's start-up). Whether the deadline stopped it."""
        rebuilt: list[tuple[MutantRecord, Entry]] = []
        out_of_time = False
        for p in planned:
            if time.monotonic() > deadline:
                out_of_time = True
                break
            record, entry = self._rebuilt(p, f"{ALONE_DIR}/{len(rebuilt)}")
            records[p.mutant.id] = record
            progress.advance("mutants")
            if entry is not None:
                rebuilt.append((record, entry))
        if rebuilt:
            verdicts = self.session([e for _, e in rebuilt], deadline)
            out_of_time = out_of_time or len(verdicts) < len(rebuilt)
            for record, entry in rebuilt:
                if entry.id in verdicts or not out_of_time:
                    _judge(record, verdicts.get(entry.id))
                else:  # built, but the deadline came before its tests: not analysed
                    del records[entry.id]
            self._root(f"rm -rf {ALONE_DIR}", 60)
        return out_of_time

    def run(self, planned: Planned) -> MutantRecord:
        """One mutant the old way: rebuilt alone, its tests in a session of their own."""
        record, entry = self._rebuilt(planned, f"{ALONE_DIR}/0")
        if entry is not None:
            _judge(record, self.session([entry], None).get(entry.id))
        return record

    def _rebuilt(self, planned: Planned, keep: str) -> tuple[MutantRecord, Entry | None]:
        """Mutant `planned` rebuilt alone, its program copied to `keep`, and the session entry
        that tests it; no entry when it needs no test (it does not build, or it is the
        reference's program). A mutant whose guard did not compile may be `build_failed`
        without a rebuild (`_not_rebuilt`)."""
        record = _record(planned, "rebuild")
        left_out = self.schema.left_out.get(planned.mutant.id)
        if self.unfaithful & set(planned.tests):
            left_out = "a test of it fails on the schema program with no mutant on"
        if left_out:
            record.detail = f"not in the schema: {left_out}"
        skip = self._not_rebuilt(planned.mutant, left_out)
        if skip:
            record.status, record.way = "build_failed", "schema"
            record.detail += f"; not rebuilt alone ({skip})"
            return record, None
        start = time.monotonic()
        build, same = self._alone(planned.mutant)
        record.build_seconds = round(time.monotonic() - start, 2)
        if not build.ok:
            record.status = "build_failed"
            record.detail = "timed out" if build.timed_out else build.text()[-600:]
            return record, None
        if same:
            record.status, record.detail = "equivalent", EQUIVALENT
            return record, None
        self._root(f"mkdir -p {ALONE_DIR} && cp {PROGRAM} {keep} && {_named(keep, self.argv0)}", 60)
        return record, Entry(planned.mutant.id, keep, 0, tuple(self._node(t) for t in planned.tests))

    def _not_rebuilt(self, m: Mutant, left_out: str | None) -> str | None:
        """Why a mutant whose guard did not compile is not rebuilt alone, or None. A Rust
        guard's arms have the expression's own type, so what it blames is ill-typed alone
        too (rcalc: 13 of 13); a C conditional is stricter than its context (`c ? p : !p`
        mixes a pointer and an int), so there a cheap rebuild is worth it. A mutant whose
        file left the schema whole (`FILE_FAILED`) is rebuilt: nothing blamed its guard."""
        if not left_out or GUARD_FAILED not in left_out:
            return None
        if language_of(m.file) in TYPED_GUARDS:
            return "its guard has the mutated expression's own type"
        if self.rebuild_seconds > CHEAP_REBUILD:
            return f"a rebuild takes {self.rebuild_seconds:.0f} s"
        return None

    def outcomes(self, m: Mutant, probes: list[Probe]) -> list[Outcome] | None:
        """What the program of mutant `m` does on each probe; None when it does not build."""
        if m.id in self.schema.switches:
            return self.outcomes_many([(m, probes)])[0]
        self._swap_in(m)
        if not self._build().ok:
            return None
        return run_probes(self.box, self._job(PROGRAM), probes)

    def outcomes_many(self, asked: list[tuple[Mutant, list[Probe]]]) -> list[list[Outcome] | None]:
        """`outcomes` of many mutants: those the schema holds in one run of the probe runner,
        each probe with its mutant's switch (a run each cost a third of a second), the rest one
        by one."""
        held = [(m, probes) for m, probes in asked if m.id in self.schema.switches]
        flat = [(p, {"TF_MUTANT": str(self.schema.switches[m.id])}) for m, probes in held for p in probes]
        ran = iter(run_probes(self.box, self._job(SCHEMA), [p for p, _ in flat], [env for _, env in flat]))
        found = {m.id: [next(ran) for _ in probes] for m, probes in held}
        return [found[m.id] if m.id in found else self.outcomes(m, probes) for m, probes in asked]

    def infections(self, probes: list[Probe]) -> list[set[int]] | None:
        """The switches of the watched mutants each probe infects, from one run of the watch
        build (a pure expression given another value); None without a watch build, or when a
        run could not record it."""
        if not self.schema.watched:
            return None
        found = [out.infects for out in run_probes(self.box, self._job(WATCH, watch=INFECTED), probes)]
        return None if any(f is None for f in found) else [f for f in found if f is not None]

    def switch(self, m: Mutant) -> int | None:
        """Mutant `m`'s switch when the watch build watches it, else None."""
        return self.schema.switches.get(m.id) if m.id in self.schema.watched else None

    def reference(self, probes: list[Probe]) -> list[Outcome]:
        """What the reference (the gold program) does on each probe."""
        return run_probes(self.box, self._job(GOLD), probes)

    def _job(self, executable: str, watch: str = "") -> RunnerJob:
        """A probe runner job on `executable`: no probe starts past `stop_at` (the guided
        search's deadline: a slow program's group of probes, seconds each, ran past it)."""
        return RunnerJob(
            executable=executable,
            timeout=self.config.program_timeout,
            workroot=PROBES_DIR,
            argv0=self.argv0,
            watch=watch,
            stop_at=self.stop_at,
        )

    def _entry(self, planned: Planned, switch: int) -> Entry:
        """A schema mutant's session entry. With a watch build, only the tests whose runs infect
        it, and those the build has no record of (they failed on it, or came later)."""
        nodes = tuple(self._node(t) for t in planned.tests)
        if planned.mutant.id in self.schema.watched:
            nodes = tuple(n for n in nodes if n not in self.infects or switch in self.infects[n])
        return Entry(planned.mutant.id, SCHEMA, switch, nodes)

    def _schema_record(self, planned: Planned, verdict: Verdict) -> MutantRecord:
        record = _record(planned, "schema")
        _judge(record, verdict)
        return record

    def _check_equivalence(
        self, planned: list[Planned], records: dict[str, MutantRecord], deadline: float
    ) -> None:
        """Schema survivors rebuilt alone to compare the stripped program with the reference's
        (the check a schema loses), while a rebuild is cheap, the check's rebuilds have taken
        under `equivalence_seconds` (over the stage's analyses) and time is left. The most
        tested first: a survivor many tests reach and none kills is the likeliest to be
        equivalent. The reference's own rebuild measures the cost (the schema build, the first
        of a Rust crate in a fresh container, says little of it). A survivor a test's run
        infected is not checked: the same program would have computed the same value."""
        stop = False
        for p in sorted(planned, key=lambda p: -len(p.tests)):
            rec = records.get(p.mutant.id)
            if rec is None or rec.way != "schema" or rec.status != "survived" or rec.infecting:
                continue  # infected: a run gave its expression another value, not the same program
            if p.mutant.id in self._checked:  # an earlier analysis rebuilt it: not equivalent
                rec.checked = True
                continue
            stop = stop or self._checking >= self.config.equivalence_seconds or time.monotonic() > deadline
            if stop or not self._cheap():
                stop = True
                continue
            self._checked.add(p.mutant.id)
            start = time.monotonic()
            if self._alone(p.mutant)[1]:
                rec.status, rec.detail = "equivalent", EQUIVALENT
            else:
                rec.checked = True
            self._checking += time.monotonic() - start
        self._restore()

    def _cheap(self) -> bool:
        """Whether a rebuild alone is cheap enough for the equivalence check (the reference's
        own rebuild, made on first use, measures it); False when the reference does not rebuild."""
        try:
            self._reference_sha()
        except MutationError as exc:
            log.warning("no equivalence check: %s", exc)
            return False
        return self.rebuild_seconds <= CHEAP_REBUILD

    def _alone(self, m: Mutant) -> tuple[ExecResult, bool]:
        """Mutant `m` built alone, and whether its stripped program is the reference's."""
        reference = self._reference_sha()
        self._swap_in(m)
        start = time.monotonic()
        build = self._build()
        self.rebuild_seconds = time.monotonic() - start
        return build, build.ok and parse_sha(build.text()) == reference

    def session(self, entries: list[Entry], deadline: float | None) -> dict[str, Verdict]:
        """Each entry's verdict, from one pytest session (`TestSession.run`)."""
        return self.tests.run(entries, deadline)

    def _node(self, junit: str) -> str:
        return node_id(junit, self.files)

    # in the container ---------------------------------------------------------------
    def _original(self, target: str) -> bytes:
        if target not in self._originals:
            self._originals[target] = self.box.get_file(target)
        return self._originals[target]

    def _swap_in(self, m: Mutant) -> None:
        """The source now holds mutant `m` (and the file an earlier mutant changed, its original)."""
        target = self.plan.target(m.file)
        if self._current is not None and self._current != target:
            self._write(self._current, self._originals[self._current])
        self._write(target, m.apply(self._original(target)))
        self._current = target

    def _restore(self) -> None:
        if self._current is not None:
            self._write(self._current, self._originals[self._current])
            self._current = None

    def _write_file(self, file: str, data: bytes) -> None:
        self._write(self.plan.target(file), data)

    def _write(self, path: str, data: bytes) -> None:
        # `cat >` keeps the file's owner and mode and gives it a new mtime, which make reads
        res = self.box.exec(f"cat > {shlex.quote(path)}", timeout=60, stdin=data, user=ROOT)
        if not res.ok:
            raise MutationError(f"cannot write {path}: {res.text()[-500:]}")

    def _build(self, every_error: bool = False) -> ExecResult:
        """The build; `every_error`: Go's compiler names every error in the module's packages,
        not its first ten, so one round of the schema build blames every guard that fails."""
        script = (GO_EVERY_ERROR if every_error else "") + self.plan.script()
        return self.box.exec(
            ["sh", "-c", script], timeout=self.config.build_timeout, user=ROOT, workdir="/src"
        )

    def _root(self, cmd: str, timeout: float, workdir: str | None = None) -> None:
        res = self.box.exec(cmd, timeout=timeout, user=ROOT, workdir=workdir)
        if not res.ok:
            raise MutationError(f"`{cmd}` failed: {res.text()[-500:]}")

    def _seal(self) -> None:
        """The workspace as the harness leaves it before the suite runs (`scripts.seal_cmd`)."""
        if self.harness.isolate:
            self._root(scripts.seal_cmd(True, self.harness.user), 120, workdir=WORKSPACE)
        else:  # the worker runs pytest and the program, and writes in the workspace
            self._root(f"chown -R {self.harness.user} {WORKSPACE}", 120)


def _record(planned: Planned, way: str) -> MutantRecord:
    m = planned.mutant
    fields = {k: v for k, v in m.__dict__.items() if k not in ("start", "end")}
    return MutantRecord(**fields, id=m.id, status="error", tests_run=len(planned.tests), way=way)


def _uninfected(planned: Planned) -> MutantRecord:
    record = _record(planned, "schema")
    record.status, record.detail, record.infecting = "survived", UNINFECTED, 0
    return record


def _judge(record: MutantRecord, verdict: Verdict | None) -> None:
    if verdict is None:
        record.status, record.detail = "error", "the test session gave no verdict"
        return
    record.status, record.test_seconds = verdict.status, round(verdict.seconds, 2)
    if verdict.status == "killed":
        record.killed_by = junit_id(verdict.killed_by or "")
    elif verdict.status in ("timeout", "error"):
        record.detail = "; ".join(verdict.failed)[:600] or "the tests did not finish"


def _named(program: str, argv0: str) -> str:
    """A shell command making `program`'s link under the name the task calls it (`argv0`'s),
    which the guard spawns instead (`by_name` in mutant_guard.c): a script sees that name, not
    /task/mutant's."""
    link = f"{program}.d/{PurePosixPath(argv0).name}"
    return f"mkdir -p {program}.d && ln -sfn {program} {link}"
