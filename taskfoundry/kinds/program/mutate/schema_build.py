"""One build for many mutants: the reference's sources rewritten as mutant schemata
(`mutation.schemata`) in a worker's build tree, built once, the program kept aside.

A guard that does not compile is found from the compiler's diagnostics; its mutants leave
the schema and the rest is built again (a few rounds at most: each round compiles only the
files that changed). Python has no compile step in its build (a zipapp), so its schemata are
compiled here, on the host, with the same blame. The sources are then put back as they were.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from taskfoundry.mutation.operators import Mutant
from taskfoundry.mutation.schemata import Diagnostic, Schema, diagnostics, match_path, schema_of, watch_of
from taskfoundry.sandbox.base import ExecResult

log = logging.getLogger(__name__)
MAX_ROUNDS = 6
GUARD_FAILED = "its guarded form does not compile"  # the compiler named the mutant's own guard
FILE_FAILED = "its file's schema does not compile"  # an error no guard explains: the whole file


@dataclass
class SchemaBuild:
    """What went into the schema program, and what could not (mutant id -> why)."""

    switches: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    watched: set[str] = field(default_factory=set)  # in the watch build as well (`_watch`)
    rounds: int = 0
    seconds: float = 0.0


@dataclass
class Tree:
    """The worker's build tree, as the schema build uses it."""

    read: Callable[[str], bytes]  # repository-relative file -> its original bytes
    write: Callable[[str, bytes], None]
    build: Callable[[], ExecResult]  # builds, and keeps the program aside when it worked
    watch: Callable[[], ExecResult] | None = None  # builds, and keeps the watch program aside


def build_schemata(tree: Tree, mutants: list[Mutant]) -> SchemaBuild:
    """Every mutant it can in one schema program; the sources restored afterwards."""
    start, out = time.monotonic(), SchemaBuild()
    originals = {f: tree.read(f) for f in sorted({m.file for m in mutants})}
    numbered: dict[str, list[tuple[int, Mutant]]] = {f: [] for f in originals}
    for n, m in enumerate(mutants, 1):
        numbered[m.file].append((n, m))
    written: dict[str, bytes] = {}
    try:
        for out.rounds in range(1, MAX_ROUNDS + 1):
            schemas = _render(originals, numbered, out)
            # a file that has lost all its guards: itself
            _write_changed(tree, originals, {f: s.text for f, s in schemas.items()}, written)
            res = tree.build()
            if res.ok:
                out.switches = {i: n for s in schemas.values() for i, n in s.switches.items()}
                if tree.watch is not None:
                    out.watched = _watch(tree, originals, numbered, written)
                return out
            # the last round: a file an error names loses all its guards, so what is left builds
            if not _blame(schemas, res.text(), numbered, out, whole_files=out.rounds == MAX_ROUNDS - 1):
                log.info("schemata: a build error no guard explains: %s", res.text()[-800:])
                break
        _give_up(numbered, out, "the schemata did not build")
        return out
    finally:
        for f, data in originals.items():
            if f in written:
                tree.write(f, data)
        out.seconds = round(time.monotonic() - start, 2)


def _watch(
    tree: Tree,
    originals: dict[str, bytes],
    numbered: dict[str, list[tuple[int, Mutant]]],
    written: dict[str, bytes],
) -> set[str]:
    """The watch build of the C files (`schemata.watch_of`), the other files as they were; the
    mutants it watches. A file an error names goes back to its original and it builds again
    once; none, if that fails too (every test then runs on every mutant)."""
    assert tree.watch is not None
    files = {f: watch_of(f, originals[f], numbered[f]) for f in originals if numbered[f]}
    files = {f: w for f, w in files.items() if w.watched}
    for _ in range(2):
        if not files:
            return set()
        _write_changed(tree, originals, {f: w.text for f, w in files.items()}, written)
        res = tree.watch()
        if res.ok:
            return {i for w in files.values() for i in w.watched}
        named = {match_path(d.path, list(files)) for d in diagnostics("c", res.text())}
        log.info("watch build failed in %s: %s", sorted(filter(None, named)), res.text()[-600:])
        files = {f: w for f, w in files.items() if f not in named}
        if not named - {None}:
            return set()
    return set()


def _write_changed(
    tree: Tree, originals: dict[str, bytes], texts: dict[str, bytes], written: dict[str, bytes]
) -> None:
    """Each file as `texts` has it (a file not there: its original), written only where it
    differs from what the tree holds (`written`: what was written so far), so the build
    recompiles only those."""
    for f, original in originals.items():
        text = texts.get(f, original)
        if written.get(f, original) != text:
            tree.write(f, text)
            written[f] = text


def _render(
    originals: dict[str, bytes], numbered: dict[str, list[tuple[int, Mutant]]], out: SchemaBuild
) -> dict[str, Schema]:
    schemas = {}
    for f, source in originals.items():
        if not numbered[f]:
            continue
        schema = schema_of(f, source, numbered[f])
        for m in schema.unguarded:
            out.left_out[m.id] = "no guard fits it"
        if schema.unguarded:
            gone = {m.id for m in schema.unguarded}
            numbered[f] = [(n, m) for n, m in numbered[f] if m.id not in gone]
        if schema.language == "python":
            schema = _python_checked(f, source, numbered, out)
        schemas[f] = schema
    return schemas


def _python_checked(
    f: str, source: bytes, numbered: dict[str, list[tuple[int, Mutant]]], out: SchemaBuild
) -> Schema:
    """A Python schema that compiles (guards a SyntaxError blames leave it, as for C)."""
    for _ in range(MAX_ROUNDS * 4):
        schema = schema_of(f, source, numbered[f])
        try:
            compile(schema.text, f, "exec", dont_inherit=True)
            return schema
        except SyntaxError as exc:
            blamed = schema.blame(Diagnostic(f, exc.lineno or 0, exc.offset))
            if not blamed:
                break
            _drop(numbered, f, {m.id for g in blamed for _, m in g.mutants}, out, f"{exc.msg}")
    _drop(numbered, f, {m.id for _, m in numbered[f]}, out, "its schema does not compile")
    return schema_of(f, source, [])


def _blame(
    schemas: dict[str, Schema],
    output: str,
    numbered: dict[str, list[tuple[int, Mutant]]],
    out: SchemaBuild,
    whole_files: bool = False,
) -> bool:
    """Take the mutants the build's errors point at out of the schema (`whole_files`: all the
    mutants of a file an error is in); False: none found. An error in no guard takes the
    whole file out only when no error in that file is in a guard: a guard's error may leave
    a name without a type, and what the compiler then says of its uses is in no guard (jsonxf:
    a match arm's dropped `return` made a variable's type unknown twenty lines on)."""
    files = list(schemas)
    named: dict[str, list[tuple[Diagnostic, set[str]]]] = {}
    for lang in {s.language for s in schemas.values()}:
        for diag in diagnostics(lang, output):
            f = match_path(diag.path, files)
            if f is not None:
                blamed = {m.id for g in schemas[f].blame(diag) for _, m in g.mutants}
                named.setdefault(f, []).append((diag, blamed))
    found = False
    for f, diags in named.items():
        explained = any(blamed for _, blamed in diags) and not whole_files
        for diag, blamed in diags:
            why = f"{GUARD_FAILED} ({f}:{diag.line})"
            if not explained:  # the file's schema as a whole
                blamed, why = {m.id for _, m in numbered[f]}, f"{FILE_FAILED} ({f}:{diag.line})"
            found |= bool(blamed & {m.id for _, m in numbered[f]})
            _drop(numbered, f, blamed, out, why)
    return found


def _drop(
    numbered: dict[str, list[tuple[int, Mutant]]], f: str, ids: set[str], out: SchemaBuild, why: str
) -> None:
    for _, m in numbered[f]:
        if m.id in ids:
            out.left_out.setdefault(m.id, why)
    numbered[f] = [(n, m) for n, m in numbered[f] if m.id not in ids]


def _give_up(numbered: dict[str, list[tuple[int, Mutant]]], out: SchemaBuild, why: str) -> None:
    for f in numbered:
        _drop(numbered, f, {m.id for _, m in numbered[f]}, out, why)
    out.switches = {}
