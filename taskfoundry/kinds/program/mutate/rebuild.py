"""Incremental rebuilds of the reference in a container of its build image.

The build image holds the gold build tree in /src. A mutant is one file changed in
place; the recipe's build commands, less those that configure the tree (./configure,
`cmake -S`, `meson setup`, ...), rebuild only what depends on it (make, cmake, meson,
cargo and go all skip what is up to date). A Python program is packed with zipapp from
the installed tree in /src/.tfapp, so its file is changed there and only the zipapp is
made again.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from taskfoundry.builders.detect_c import GNULIB_PREPARE
from taskfoundry.builders.detect_python import entry_root
from taskfoundry.builders.recipe import Recipe

SRC = "/src"
MUTANT_DIR = "/task/mutant"
PROGRAM = f"{MUTANT_DIR}/program"  # the program built from the current mutant
STRIPPED = "/tmp/tfm-stripped"
# commands that (re)configure a tree: run once at image build, not again per mutant
_SETUP = re.compile(
    r"^\s*(\./configure\b|autoreconf\b|cmake\s+(-S|-B|\.)|meson\s+setup\b|python3 -m venv\b|\S*pip install\b)"
)


def _is_setup(command: str) -> bool:
    """gnulib's bootstrap steps too (libidn2's mutation had "the reference does not rebuild in
    its image": a bootstrap run again in a tree it had made)."""
    return command in GNULIB_PREPARE or bool(_SETUP.match(command))


_PY_APP = ".tfapp"
# Go writes a build ID into the binary: a hash of its inputs (the source), not of its code. A
# mutant whose code compiles to the reference's would differ by it alone, so it is blanked in
# the copy that is hashed (trivial compiler equivalence, as for C and Rust).
_BLANK_GO_BUILD_ID = (
    f'if id=$(go tool buildid "$f" 2>/dev/null) && [ -n "$id" ]; then cp "$f" {STRIPPED}.id; '
    f'python3 -c \'import sys; p, i = sys.argv[1], sys.argv[2].encode(); d = open(p, "rb").read(); '
    f'open(p, "wb").write(d.replace(i, bytes(len(i))))\' {STRIPPED}.id "$id"; f={STRIPPED}.id; fi',
)


@dataclass(frozen=True)
class RebuildPlan:
    """How to rebuild the reference after one file changed, in a container of its build image."""

    commands: tuple[str, ...]
    executable: str  # the built program, absolute path in the image
    python_app: bool = False
    python_root: str | None = None  # the directory holding the package (None: `src` or the tree)

    def target(self, file: str) -> str:
        """Where `file` (relative to the repository root, as coverage names it) is in the image:
        a Python program's installed copy drops the directory its package sits in (ufomerge's
        `Lib/ufomerge/__init__.py` is `.tfapp/ufomerge/__init__.py`)."""
        if self.python_app:
            root = "src" if self.python_root is None else self.python_root
            rel = file.removeprefix(f"{root}/") if root else file
            return f"{SRC}/{_PY_APP}/{rel}"
        return f"{SRC}/{file}"

    def script(self) -> str:
        """Rebuild, install the program at PROGRAM, and print the sha256 of its stripped copy."""
        lines = ["set -e", f"cd {SRC}", *self.commands]
        lines += [
            f"install -D -m 0755 {shlex.quote(self.executable)} {PROGRAM}",
            # the GNU build ID goes too: Go derives it from its own build ID (see below)
            f"if strip -R .note.gnu.build-id -o {STRIPPED} {PROGRAM} 2>/dev/null; then f={STRIPPED}; "
            f"else f={PROGRAM}; fi",
            *_BLANK_GO_BUILD_ID,
            'echo "tfm-sha256 $(sha256sum "$f" | cut -d" " -f1)"',
        ]
        return "\n".join(lines) + "\n"


def rebuild_plan(recipe: Recipe, repo: Path | None = None) -> RebuildPlan:
    """`repo`, the checkout on the host, places a Python program's package (`entry_root`)."""
    executable = f"{SRC}/{recipe.executable}"
    if recipe.kind == "python":
        zipapp = tuple(c for c in recipe.build if "zipapp" in c)
        root = entry_root(repo, recipe.entry_point) if repo and recipe.entry_point else None
        return RebuildPlan(commands=zipapp, executable=executable, python_app=True, python_root=root)
    commands = tuple(c for c in recipe.build if not _is_setup(c)) or tuple(recipe.build)
    if recipe.kind == "cargo":  # incremental release builds: ~1 s a mutant instead of ~7 s
        commands = ("export CARGO_INCREMENTAL=1", *commands)
    return RebuildPlan(commands=commands, executable=executable)


def parse_sha(output: str) -> str | None:
    found = re.findall(r"^tfm-sha256 ([0-9a-f]{64})$", output, re.M)
    return found[-1] if found else None
