"""Mutant schemata, compiled for real: each mutant switched on in the one schema build behaves
as the same mutant built alone, and what does not compile is blamed on its guard."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.rebuild import RebuildPlan
from taskfoundry.kinds.program.mutate.schema_build import FILE_FAILED, GUARD_FAILED, SchemaBuild, _blame
from taskfoundry.kinds.program.mutate.worker import CHEAP_REBUILD, GO_EVERY_ERROR, TYPED_GUARDS, MutantWorker
from taskfoundry.kinds.program.settings import MutationConfig
from taskfoundry.mutation.operators import Mutant, mutants_of
from taskfoundry.mutation.schemata import Diagnostic, diagnostics, match_path, schema_of, watch_of
from taskfoundry.sandbox.base import Sandbox
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.syntax.parse import parse

C_PROGRAM = b"""#include <stdio.h>
#include <stdlib.h>
static int table[3] = {1, 2, 3};
static int clamp(int v, int lo, int hi) {
    if (v < lo) return lo;
    if (v > hi) return hi;
    return v;
}
int main(int argc, char **argv) {
    int total = 0;
    for (int i = 1; i < argc; i++) {
        int v = atoi(argv[i]);
        if (v % 2 == 0 && v != 0) total += v * 2;
        else total -= !v ? 1 : v;
        if (total > 100) break;
    }
    printf("%d %d\\n", clamp(total, -50, 50), table[1]);
    return total < 0;
}
"""

RUST_PROGRAM = b"""use std::env;
fn score(v: i64) -> i64 {
    if v % 3 == 0 { return v / 3; }
    let mut x = v;
    x += 2;
    x * 2 - 1
}
mod inner {
    pub fn twice(v: i64) -> i64 { v + v }
}
fn bucket(v: i64) -> i64 {
    match v {
        0 => 100,
        n if n < 5 && n != 2 => n + 1,
        _ => 7,
    }
}
fn main() {
    let mut total: i64 = 0;
    for a in env::args().skip(1) {
        let v: i64 = a.parse().unwrap_or(0);
        if v > 10 && !(v == 12) { total += inner::twice(v); } else { total -= score(v); }
        total += bucket(v);
    }
    println!("{}", total);
}
"""

# a return inserted in `make` (Env has no Default) is ill-typed guarded and alone
RUST_TYPED = b"""use std::collections::BTreeMap;
struct Env {
    vars: BTreeMap<String, i64>,
}
fn lookup(env: &Env, k: &str) -> Result<i64, String> {
    env.vars.get(k).copied().ok_or(format!("no {}", k))
}
fn make(n: i64) -> Env {
    let mut vars = BTreeMap::new();
    vars.insert("x".to_string(), n);
    Env { vars }
}
fn main() {
    let n: i64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let v = match lookup(&make(n), "x") {
        Ok(n) => n * 2 + 1,
        Err(_) => -1,
    };
    println!("{}", v);
}
"""

PY_PROGRAM = b"""import sys


def score(v):
    if v % 3 == 0:
        return v // 3
    x = v
    x += 2
    return x * 2 - 1


def main():
    total = 0
    for a in sys.argv[1:]:
        v = int(a)
        if v > 10 and not v == 12:
            total += v
        else:
            total -= score(v)
    print(total)


main()
"""
ARGS = [["4", "7", "0"], ["12", "13", "3"], ["-5", "200", "2"], []]


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit status and stdout (stderr names the source's path, which differs by build)."""
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)
    return res.returncode, res.stdout


def _behaviour(cmd: list[str], switch: int | None = None) -> list[tuple[int, str]]:
    env = {"PATH": os.environ["PATH"]} | ({"TF_MUTANT": str(switch)} if switch else {})
    return [_run(cmd + a, env) for a in ARGS]


def _source(out: Path, name: str, source: bytes) -> Path:
    """The source as `name` (the name diagnostics give) in a directory of its own."""
    src = out.parent / f"{out.name}.d" / name
    src.parent.mkdir(exist_ok=True)
    src.write_bytes(source)
    return src


def _compile_c(source: bytes, out: Path) -> tuple[bool, str]:
    src = _source(out, "prog.c", source)
    res = subprocess.run(["gcc", "-O1", "-o", str(out), str(src)], capture_output=True, text=True)
    return res.returncode == 0, res.stderr


def _compile_rust(source: bytes, out: Path) -> tuple[bool, str]:
    src = _source(out, "prog.rs", source)
    res = subprocess.run(
        ["rustc", "-O", "--edition", "2021", "-o", str(out), str(src)], capture_output=True, text=True
    )
    return res.returncode == 0, res.stderr


def _schema_until_built(file: str, source: bytes, compile_, out: Path) -> tuple[dict[str, int], set[str]]:
    """Build the schema of every mutant of `source`, leaving out what the errors blame."""
    numbered = list(enumerate(mutants_of(file, source), 1))
    left_out: set[str] = set()
    for _ in range(8):
        schema = schema_of(file, source, numbered)
        left_out |= {m.id for m in schema.unguarded}
        ok, errors = compile_(schema.text, out)
        if ok:
            return schema.switches, left_out
        blamed = {
            m.id
            for d in diagnostics(schema.language, errors)
            if match_path(d.path, [file]) == file
            for g in schema.blame(d)
            for _, m in g.mutants
        }
        assert blamed, f"an error no guard explains:\n{errors[-3000:]}"
        left_out |= blamed
        numbered = [(n, m) for n, m in numbered if m.id not in left_out]
    raise AssertionError("the schema never built")


def _agree(file: str, source: bytes, compile_, tmp: Path) -> tuple[int, int, int]:
    """Every mutant in the schema behaves as the mutant built alone; (in schema, compared, left out)."""
    switches, left_out = _schema_until_built(file, source, compile_, tmp / "schema")
    plain = tmp / "plain"
    assert compile_(source, plain)[0]
    assert _behaviour([str(tmp / "schema")]) == _behaviour([str(plain)])  # no switch: the original
    compared = 0
    for m in mutants_of(file, source):
        if m.id not in switches:
            continue
        ok, _ = compile_(m.apply(source), tmp / "alone")
        if not ok:  # a mutant that does not compile alone cannot compile guarded either
            continue
        alone = _behaviour([str(tmp / "alone")])
        assert _behaviour([str(tmp / "schema")], switches[m.id]) == alone, (m, switches[m.id])
        compared += 1
    return len(switches), compared, len(left_out)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_c_schema_mutants_behave_as_rebuilt(tmp_path: Path) -> None:
    in_schema, compared, left_out = _agree("prog.c", C_PROGRAM, _compile_c, tmp_path)
    assert compared >= 25 and compared == in_schema
    assert left_out >= 1  # `{1, 2, 3}` of a static array: a run-time switch is no constant
    assert b"#line 1" in schema_of("prog.c", C_PROGRAM, []).text  # __LINE__ and assert() unchanged


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_mutant_no_run_infects_behaves_there_as_the_original(tmp_path: Path) -> None:
    """The watch build runs as the original and names the mutants whose expression took another
    value; every watched mutant it does not name for an input gives the original's output on
    that input when built alone (what lets a test be skipped for it), and the infected ones
    include the mutants that do change the output."""
    numbered = list(enumerate(mutants_of("prog.c", C_PROGRAM), 1))
    log = tmp_path / "infected"
    watch = watch_of("prog.c", C_PROGRAM, numbered, str(log))
    assert len(watch.watched) >= 20 and watch.language == "c"
    assert _compile_c(watch.text, tmp_path / "watch")[0] and _compile_c(C_PROGRAM, tmp_path / "plain")[0]
    alone = {}
    for _, m in numbered:
        if m.id in watch.watched and _compile_c(m.apply(C_PROGRAM), tmp_path / m.id)[0]:
            alone[m.id] = tmp_path / m.id
    skipped = changed = 0
    for args in ARGS:
        log.unlink(missing_ok=True)
        assert _run([str(tmp_path / "watch"), *args]) == (plain := _run([str(tmp_path / "plain"), *args]))
        infected = {int(n) for n in log.read_text().split()} if log.exists() else set()
        for n, m in numbered:
            if m.id not in alone:
                continue
            differs = _run([str(alone[m.id]), *args]) != plain
            changed += differs
            if n not in infected:
                assert not differs, (m, args)  # sound: skipping the run loses no kill
                skipped += 1
    assert skipped >= 20 and changed >= 20  # it prunes, and there was something to tell apart


@pytest.mark.skipif(shutil.which("rustc") is None, reason="needs rustc")
def test_rust_schema_mutants_behave_as_rebuilt(tmp_path: Path) -> None:
    in_schema, compared, _ = _agree("prog.rs", RUST_PROGRAM, _compile_rust, tmp_path)
    assert compared >= 15
    assert in_schema >= compared


@pytest.mark.skipif(shutil.which("rustc") is None, reason="needs rustc")
def test_a_rust_mutant_whose_guard_does_not_compile_does_not_compile_alone(tmp_path: Path) -> None:
    """What the worker's TYPED_GUARDS rests on: a Rust guard's arms have the expression's own
    type, so each mutant the compiler blames is ill-typed alone too, and needs no rebuild."""
    numbered = list(enumerate(mutants_of("prog.rs", RUST_TYPED), 1))
    unguarded = {m.id for m in schema_of("prog.rs", RUST_TYPED, numbered).unguarded}
    _, left_out = _schema_until_built("prog.rs", RUST_TYPED, _compile_rust, tmp_path / "schema")
    blamed = [m for _, m in numbered if m.id in left_out - unguarded]
    assert [m.operator for m in blamed] == ["return"]
    for m in blamed:
        assert not _compile_rust(m.apply(RUST_TYPED), tmp_path / "alone")[0], m
    assert "rust" in TYPED_GUARDS


def test_a_mutant_whose_guard_does_not_compile_is_rebuilt_alone_only_where_it_may_compile() -> None:
    worker = MutantWorker(
        cast(Sandbox, None), RebuildPlan(("make",), "/src/prog"), MutationConfig(), EvalConfig()
    )
    worker.rebuild_seconds = 1.0
    rust, c = (Mutant(f, 3, "return", 10, 10, "", "return 0; ") for f in ("src/a.rs", "a.c"))
    guard = "its guarded form does not compile (a:3)"
    assert worker._not_rebuilt(rust, guard) == "its guard has the mutated expression's own type"
    assert worker._not_rebuilt(c, guard) is None  # `c ? p : !p`: the guard's own fault
    assert worker._not_rebuilt(rust, "no guard fits it") is None
    assert worker._not_rebuilt(rust, f"{FILE_FAILED} (a:3)") is None  # nothing blamed its own guard
    worker.rebuild_seconds = CHEAP_REBUILD + 1
    assert worker._not_rebuilt(c, guard) == f"a rebuild takes {CHEAP_REBUILD + 1:.0f} s"


def test_python_schema_mutants_behave_as_rebuilt(tmp_path: Path) -> None:
    source = PY_PROGRAM
    numbered = list(enumerate(mutants_of("prog.py", source), 1))
    schema = schema_of("prog.py", source, numbered)
    compile(schema.text, "prog.py", "exec")
    assert not schema.unguarded
    (tmp_path / "schema.py").write_bytes(schema.text)
    (tmp_path / "plain.py").write_bytes(source)
    schema_cmd, plain_cmd = (
        [sys.executable, str(tmp_path / "schema.py")],
        [sys.executable, str(tmp_path / "plain.py")],
    )
    assert _behaviour(schema_cmd) == _behaviour(plain_cmd)
    for n, m in numbered:
        (tmp_path / "alone.py").write_bytes(m.apply(source))
        assert _behaviour(schema_cmd, n) == _behaviour([sys.executable, str(tmp_path / "alone.py")]), m


def test_go_schema_guards_statements_and_parses() -> None:
    source = b"""package main

import "fmt"

func score(v int) int {
	if v%3 == 0 {
		return v / 3
	}
	x := v + 1
	x += 2
	return x*2 - 1
}

func main() {
	fmt.Println(score(4))
}
"""
    numbered = list(enumerate(mutants_of("main.go", source), 1))
    schema = schema_of("main.go", source, numbered)
    tree = parse(schema.text, "go").root_node
    assert not tree.has_error, schema.text.decode()
    assert b"import tfos_" in schema.text and b"tfMut_" in schema.text
    # `x := v + 1`: an `if` would end x's scope, so its mutants are guarded as expressions
    assert not schema.unguarded and len(schema.switches) == len(numbered)
    forms = {g.form for g in schema.guards if g.mutants[0][1].line == 9}
    assert forms == {"operator", "pick"}, forms
    assert schema.text.count(b"func tfG_") == 2  # each helper after the file, typed by its use


# declarations (`x := ...`) and a package-level var: no `if` can hold them, so their mutants
# are guarded as expressions (a closure, or a generic helper); a rune field, a string chain
GO_DECLARING = b"""package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

var scale = 2 * 3

type opt struct {
	short rune
	name  string
}

func parse(args []string) []int {
	out := make([]int, 0, len(args))
	for _, a := range args {
		v, err := strconv.Atoi(a)
		if err != nil {
			continue
		}
		out = append(out, v)
	}
	return out
}

func main() {
	vals := parse(os.Args[1:])
	total := 0
	big := len(vals) > 2 && vals[0] < vals[1]
	for i, v := range vals {
		half := v/2 + 1
		shifted := v << 2
		odd := v%2 == 1
		rest := (v - 4) * scale
		if odd || !big {
			total += half
		} else {
			total -= shifted - i
		}
		total += rest % 7
	}
	label := "sum" + ":" + strconv.Itoa(len(vals))
	ratio := float64(total) / 2.5
	o := opt{0, "x"}
	width := 3
	fmt.Println(label, total, big, strings.Repeat("=", width), fmt.Sprintf("%.2f", ratio), o.short)
	if total < 0 {
		os.Exit(1)
	}
}
"""


def _go_build(box: Sandbox, sources: dict[str, bytes], out: Path) -> dict[str, str]:
    """Each source built as its own module in the base image's Go, in one exec, the programs
    (static) copied to `out`; name -> the compiler's errors, for those that did not build."""
    for name, text in sources.items():
        (out / "src" / name).mkdir(parents=True)
        (out / "src" / name / "prog.go").write_bytes(text)
        (out / "src" / name / "go.mod").write_bytes(b"module x\n\ngo 1.19\n")
    box.put_dir(out / "src", "/tmp/go")
    script = GO_EVERY_ERROR + (
        "mkdir -p /tmp/bin; cd /tmp/go; for d in *; do (cd $d && CGO_ENABLED=0 "
        "go build -o /tmp/bin/$d . 2>/tmp/bin/$d.err && rm /tmp/bin/$d.err); done; true"
    )
    assert box.exec(["sh", "-c", script], timeout=600).ok
    box.exec("rm -rf /tmp/go", timeout=60)
    box.get_dir("/tmp/bin", out)
    box.exec("rm -rf /tmp/bin", timeout=60)
    return {p.stem: p.read_text() for p in out.glob("*.err")}


@pytest.mark.docker
def test_go_declarations_are_guarded_as_expressions_and_behave_as_rebuilt(
    docker_client, base_image: str, tmp_path: Path
) -> None:
    """Every mutant the Go schema holds, switched on, behaves as the mutant built alone; those
    in declarations are in it (closures, helpers), and a guard that does not type-check is
    blamed with its chain in one round (the compiler names every error: GO_EVERY_ERROR)."""
    numbered = list(enumerate(mutants_of("prog.go", GO_DECLARING), 1))
    with DockerSandbox(base_image, client=docker_client) as box:
        schema, rounds = schema_of("prog.go", GO_DECLARING, numbered), 0
        while errors := _go_build(box, {"schema": schema.text}, tmp_path / f"r{rounds}").get("schema"):
            blamed = {m.id for d in diagnostics("go", errors) for g in schema.blame(d) for _, m in g.mutants}
            assert blamed, errors
            numbered = [(n, m) for n, m in numbered if m.id not in blamed]
            schema, rounds = schema_of("prog.go", GO_DECLARING, numbered), rounds + 1
        alone = {f"m{n}": m.apply(GO_DECLARING) for n, m in numbered}
        failed = _go_build(box, {"plain": GO_DECLARING, **alone}, tmp_path / "alone")
    assert rounds == 1 and not schema.unguarded
    forms = {m.id: g.form for g in schema.guards for _, m in g.mutants}
    assert {"bool", "pick", "operator"} <= set(forms.values())
    assert len([f for f in forms.values() if f]) >= 30
    binary = tmp_path / f"r{rounds}" / "schema"
    assert _behaviour([str(binary)]) == _behaviour([str(tmp_path / "alone" / "plain")])
    compared = 0
    for n, m in numbered:
        if f"m{n}" in failed:  # dropped statements that leave a variable unused: Go refuses them
            assert m.operator == "statement" and re.search("declared (and|but) not used", failed[f"m{n}"]), m
            continue
        assert _behaviour([str(binary)], n) == _behaviour([str(tmp_path / "alone" / f"m{n}")]), m
        compared += 1
    assert compared >= 55


def test_an_error_in_no_guard_takes_its_file_out_only_when_none_there_is_in_a_guard() -> None:
    """A guard's error can leave a name without a type, and the compiler's word on its uses is
    in no guard (jsonxf: 36 of main.rs's mutants went with the file, and Rust's were then
    `build_failed` unbuilt): with an error in a guard beside it, only that guard goes."""
    numbered = list(enumerate(mutants_of("prog.c", C_PROGRAM), 1))
    schema = schema_of("prog.c", C_PROGRAM, numbered)
    guard = next(g for g in schema.guards if not g.statement)
    start = schema.text.rfind(b"\n", 0, guard.out_start) + 1
    line = schema.text[: guard.out_start].count(b"\n") + 1 - schema.head_lines
    in_guard = f"prog.c:{line}:{guard.out_start - start + 1}: error: invalid operands\n"
    elsewhere = "prog.c:1:10: error: unknown type name 'x'\n"  # `#include`: no guard there
    both, alone = SchemaBuild(), SchemaBuild()
    assert _blame({"prog.c": schema}, in_guard + elsewhere, {"prog.c": list(numbered)}, both)
    assert set(both.left_out) == {m.id for _, m in guard.mutants}
    assert all(why.startswith(GUARD_FAILED) for why in both.left_out.values())
    assert _blame({"prog.c": schema}, elsewhere, {"prog.c": list(numbered)}, alone)
    assert len(alone.left_out) == len(numbered)
    assert all(why.startswith(FILE_FAILED) for why in alone.left_out.values())


def test_blame_finds_the_guard_at_the_error() -> None:
    source = b"int x = 3;\nint main(void) { return x > 1; }\n"
    at = source.index(b"1;")
    m = Mutant("a.c", 2, "constant", at, at + 1, "1", "1 +")  # a guard that cannot compile
    schema = schema_of("a.c", source, [(1, m)])
    line = schema.text[: schema.guards[0].out_start].count(b"\n") + 1 - schema.head_lines
    assert schema.blame(Diagnostic("a.c", line, None)) == schema.guards
    assert schema.blame(Diagnostic("a.c", line + 5, None)) == []


def test_constants_get_no_guard() -> None:
    """A run-time switch cannot choose a value the compiler must know: those are rebuilt alone."""
    c = (
        b"static int t[2] = {1, 2};\nenum { A = 3 };\n"
        b"int f(int v) { switch (v) { case 4: v++; } return 6; }\n"
    )
    schema = schema_of("a.c", c, list(enumerate(mutants_of("a.c", c), 1)))
    assert {m.original for m in schema.unguarded} == {"1", "2"}
    guarded = {(m.original, m.replacement) for g in schema.guards for _, m in g.mutants}
    assert ("++", "--") in guarded and ("6", "7") in guarded
    rust = b"const N: usize = 7;\nfn f(v: u8) -> u8 { match v { 8 => 9, _ => 10 } }\n"
    schema = schema_of("a.rs", rust, list(enumerate(mutants_of("a.rs", rust), 1)))
    assert {m.original for m in schema.unguarded} == {"7", "8"}
    assert {m.original for g in schema.guards for _, m in g.mutants} >= {"9", "10"}


def test_diagnostics_of_each_compiler() -> None:
    gcc = "src/csv.c:271:100: error: invalid operands\nsrc/x.c:3:1: warning: unused\n"
    assert diagnostics("c", gcc) == [Diagnostic("src/csv.c", 271, 100)]
    rust = (
        "warning: unused\n --> src/a.rs:1:1\n\n"
        "error[E0308]: mismatched types\n  --> src/main.rs:54:34\n   |\n44 | |  if x\n54 | |  opts\n"
    )
    assert diagnostics("rust", rust) == [Diagnostic("src/main.rs", 54, 34, (44, 54))]
    go = "# example.com/logsum\n./parse.go:12:5: undefined: x\n"
    assert diagnostics("go", go) == [Diagnostic("./parse.go", 12, 5)]
    assert match_path("./parse.go", ["parse.go", "main.go"]) == "parse.go"
    assert match_path("../src/csv.c", ["src/csv.c"]) == "src/csv.c"
    assert match_path("other.c", ["src/csv.c"]) is None


# figlet's inflate.c in small: a statement that is an #ifdef, and a macro that declares labels
C_REAL = b"""#include <stdio.h>
#include <stdlib.h>
#define CATCH_BEGIN goto done; cleanup: puts("cleanup"); done:
static int parse(int v) {
    int r = 0;
    if (v < 0) goto cleanup;
#ifdef WIDE
    if (v > 300) r = 2;
#else
    if (v > 30) r = 1;
#endif
    r += v * 2;
    CATCH_BEGIN
    return r;
}
int main(int argc, char **argv) {
    printf("%d\\n", parse(argc > 1 ? atoi(argv[1]) : 3));
    return 0;
}
"""


def test_a_statement_that_starts_with_a_preprocessor_line_gets_no_guard() -> None:
    """`r = 2;` is the body of an `if` inside an #ifdef: the statement a guard would wrap is the
    #ifdef itself, and `if (on) { #ifdef` is not C."""
    numbered = list(enumerate(mutants_of("a.c", C_REAL), 1))
    schema = schema_of("a.c", C_REAL, numbered)
    assert {m.original for m in schema.unguarded if m.operator == "statement"} == {"r = 2;", "r = 1;"}
    assert "r += v * 2;" in {m.original for g in schema.guards for _, m in g.mutants}
    assert not re.search(rb"\{\s*#", schema.text)


def test_an_error_in_a_macro_is_blamed_on_the_guards_where_it_is_used() -> None:
    """The error points into the macro's definition, outside every guard; gcc's note names
    the line that uses it, and the guards there take the blame (not the whole file)."""
    gcc = (
        "a.c:3:35: error: duplicate label 'cleanup'\n    3 | #define CATCH_BEGIN goto done; cleanup:\n"
        "a.c:12:5: note: in expansion of macro 'CATCH_BEGIN'\n   12 |     CATCH_BEGIN\n"
    )
    (diag,) = diagnostics("c", gcc)
    assert diag == Diagnostic("a.c", 3, 35, (), (12,))
    schema = schema_of("a.c", C_REAL, list(enumerate(mutants_of("a.c", C_REAL), 1)))
    blamed = {m.original for g in schema.blame(diag) for _, m in g.mutants}
    assert "r += v * 2;" in blamed and blamed <= {"r += v * 2;", "+=", "*", "2"}
    assert schema.blame(Diagnostic("a.c", 3, 35)) == []  # without the note: nothing to blame


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_every_mutant_of_real_c_builds_into_one_schema(tmp_path: Path) -> None:
    """Every mutant of the program: what the build's errors blame leaves, the rest builds."""
    switches, left_out = _schema_until_built("a.c", C_REAL, _compile_c, tmp_path / "schema")
    assert len(switches) >= 10 and len(switches) > len(left_out)
    for n in sorted(switches.values())[:5]:
        assert _run([str(tmp_path / "schema"), "40"], {"TF_MUTANT": str(n), "PATH": os.environ["PATH"]})


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_file_that_loses_every_guard_is_itself_again(tmp_path: Path) -> None:
    """b.c's one mutant does not compile: b.c is written back as it was, and a.c's mutants stay
    in the schema (a stale b.c failed every build after, and took every file's mutants out)."""
    from taskfoundry.kinds.program.mutate.schema_build import Tree, build_schemata

    a = b"int twice(int v) { return v + v; }\n"
    b = b"int twice(int v);\nint main(void) { return twice(2) > 3; }\n"
    for name, text in (("a.c", a), ("b.c", b)):
        (tmp_path / name).write_bytes(text)

    class Built:
        def __init__(self, res: subprocess.CompletedProcess[str]) -> None:
            self.ok, self.timed_out, self.output = res.returncode == 0, False, res.stderr

        def text(self) -> str:
            return self.output

    def build() -> Built:
        cmd = ["gcc", "-o", "prog", "a.c", "b.c"]
        return Built(subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True))

    at = b.index(b">")
    broken = Mutant("b.c", 2, "relational", at, at + 1, ">", "> >")
    plus = a.index(b"+")
    good = Mutant("a.c", 1, "arithmetic", plus, plus + 1, "+", "-")
    tree = Tree(
        read=lambda f: (tmp_path / f).read_bytes(),
        write=lambda f, d: (tmp_path / f).write_bytes(d),
        build=build,  # type: ignore[arg-type]
    )
    out = build_schemata(tree, [good, broken])
    assert set(out.switches) == {good.id}
    assert "does not compile" in out.left_out[broken.id]
    assert (tmp_path / "b.c").read_bytes() == b and (tmp_path / "a.c").read_bytes() == a
