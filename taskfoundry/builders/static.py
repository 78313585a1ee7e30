"""A gold that nothing can be loaded into: the gold build links statically where it can.

A dynamically linked gold runs `ld.so`, which honours `LD_PRELOAD`, `LD_AUDIT` and
`LD_LIBRARY_PATH` for the worker: code of the worker's runs inside the gold's process and can
copy its mapped segments out (docs/evaluator.md, "Execute-only"). A static gold has no loader.

How, per language, without touching the recipe a task ships (`build.sh` stays the recipe):
- C and C++: compiler shims first on PATH add `-static` to every link line (a compile,
  preprocess or shared-library line passes through), whatever the build system is;
- Go: `CGO_ENABLED=0` (pure-Go programs link statically by themselves);
- Rust: the cargo recipe itself builds with `crt-static` for the host triple (`cargo_lines`).
The recipe's own build runs first, as before, in /src; the static attempt is a second build
in a pristine copy. When it fails, the gold stays as the recipe built it, and the cleanroom
records the task's gold as instrumentable (reports/integrity.json).
"""

from __future__ import annotations

import shlex

SHIM_DIR = "/task/static-bin"
STATIC_TREE = "/static-src"  # the static attempt's copy of the tree, removed after it
SHIM_NAMES = ("cc", "gcc", "c++", "g++", "x86_64-linux-gnu-gcc", "x86_64-linux-gnu-g++")
#: Printed to the build log when the static attempt failed and the gold is built as it was.
STATIC_FAILED = "== taskfoundry: the static gold build failed; the gold stays as the recipe builds it"
SAME_CHECK = f"{SHIM_DIR}/same-behaviour"

# A static link can build and still not be the same program: GNU hello linked against static
# glibc prints its greeting and dies of SIGSEGV at exit (its locale and gettext set-up), and
# every test then expected the crash. So the static program must answer a few plain calls
# (no arguments, --help, --version; stdin empty) exactly as the recipe's own build does,
# each run from the same path; otherwise the recipe's build stays the gold. The Go
# toolchain's build settings a program may print (`build\tCGO_ENABLED=1`, gobuster's
# --version) say how it was built, not what it does: they are not compared.
SAME_BEHAVIOUR = """#!/bin/sh
d=$(mktemp -d)
for args in "" --help --version; do
  for which in static own; do
    if [ "$which" = static ]; then cp "$1" "$d/program"; else cp "$2" "$d/program"; fi
    (cd "$d" && timeout 10 ./program $args </dev/null >"$d/out" 2>&1; echo "exit $?" >>"$d/out")
    sed '/^[[:space:]]*build[[:space:]][[:alnum:]_.-]*=/d' "$d/out" >"$d/$which"
  done
  if ! cmp -s "$d/static" "$d/own"; then
    echo "== taskfoundry: the static program differs from the recipe's own build on '$args':"
    diff "$d/own" "$d/static" | head -n 20
    rm -rf "$d"
    exit 1
  fi
done
rm -rf "$d"
"""

# A link line is one without -c/-S/-E/-M (compile only, preprocess, dependencies), -shared
# or -r (a library or a relocatable object), or a query of the driver itself; rustc's own
# link lines (build scripts, proc macros: host code that cannot be static) pass through.
SHIM = """#!/bin/sh
# taskfoundry: gold builds link statically (builders/static.py)
name=$(basename "$0")
real=/usr/bin/$name
for arg in "$@"; do
  case "$arg" in
    -c|-S|-E|-M|-MM|-shared|-r|-v|--version|-dumpversion|-dumpmachine|-print-*|-static-pie)
      exec "$real" "$@" ;;
    *.rlib*|*/rustc*)
      exec "$real" "$@" ;;
  esac
done
exec "$real" -static "$@"
"""


def attempt(pristine: str, gold: str, dest: str) -> str:
    """Shell: build.sh again in a copy of `pristine` (the tree before any build) with the
    static settings; when it builds, its program (`gold`, relative) replaces `dest`. The
    tree in /src keeps the recipe's own build (mutants are rebuilt there, incrementally)."""
    static = f"PATH={SHIM_DIR}:$PATH CGO_ENABLED=0 sh -e /task/build.sh"
    same = f"sh {SAME_CHECK} {STATIC_TREE}/{gold} {dest}"
    return (
        f"{{ cp -a {pristine} {STATIC_TREE} && cd {STATIC_TREE} && {static} && {same} "
        f"&& install -m 0755 {STATIC_TREE}/{gold} {dest} || echo '{STATIC_FAILED}'; "
        f"cd / && rm -rf {STATIC_TREE}; }}"
    )


def shim_files() -> dict[str, str]:
    """The shims, by path in the build image, and the check of the static program."""
    return {**{f"{SHIM_DIR}/{name}": SHIM for name in SHIM_NAMES}, SAME_CHECK: SAME_BEHAVIOUR}


def cargo_lines(flags: str, name: str, modules: tuple[str, ...] = ()) -> list[str]:
    """`cargo build --release` with the C runtime linked in (`crt-static`), for the host triple
    named explicitly (without `--target`, RUSTFLAGS also reach proc macros, which cannot be
    static), then copied to where a plain build puts it; a crate that cannot link so (a -sys
    crate without a static library) is built as usual. The static libraries of the pkg-config
    `modules` (and those they need) are linked in whole, by file name: an `-lz` would be the
    shared one, and glibc's `__tls_get_addr` with it."""
    exe = shlex.quote(f"target/release/{name}")
    link = ""
    if modules:
        mods = " ".join(shlex.quote(m) for m in modules)
        link = (
            f"tf_link=$(for l in $(pkg-config --static --libs-only-l {mods} 2>/dev/null); do "
            "printf ' -C link-arg=-l:lib%s.a' \"${l#-l}\"; done) && "
        )
    static = (
        "tf_host=$(rustc -vV | sed -n 's/^host: //p') && "
        + link
        + f'RUSTFLAGS="-C target-feature=+crt-static${{tf_link:-}}" cargo build --release {flags} '
        f'--target "$tf_host" && mkdir -p target/release && cp "target/$tf_host/release/{name}" {exe}'
    )
    return [f"{{ {static}; }} || cargo build --release {flags}"]
