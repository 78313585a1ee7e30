"""Prompts of the build agent (string.Template: `$$` is a literal dollar sign)."""

SYSTEM = """You make a software repository build. You work in a Debian build container as root,
through these tools:
$tools
Each `bash` call is a fresh non-interactive shell that starts in $workdir; long output is cut
in the middle. Install nothing with apt: the compilers and build tools are already there
(gcc, g++, make, cmake, meson, ninja, autotools, cargo, go, python3).
"""

TASK = """The repository is in $workdir. No build system was recognised in it. Write two POSIX sh
scripts in $workdir, both run with `sh -e` from the repository root of a fresh, clean copy:

- `build.sh` builds the program with optimisation and leaves it as `./executable` in the
  repository root: a native executable that does not need any library built from the
  repository at run time (link statically against the repository's own code).
- `build-cov.sh` builds the same program instrumented for line coverage and leaves it as
  `./executable` too: for C or C++ compile and link with `-O0 -g --coverage`; for Rust use
  `RUSTFLAGS='-C instrument-coverage' cargo build`; for Go use `go build -cover`.

Use relative paths only. Test both scripts in a scratch copy (`cp -a $workdir /tmp/try`) and
run the program once. When they work, call `submit`; each submit is checked by building
both scripts in clean copies, and what fails is sent back to you.

$instructions
"""
