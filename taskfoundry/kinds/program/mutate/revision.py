"""The survivors as a revision request for the agent generator: each change with the source
around its line, and what to write so that a test tells it apart from the reference."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from taskfoundry.kinds.program.mutate.select import source_path

#: the file names the agent is asked to use for the new tests
AGENT_PREFIX = "test_mutants_"
REQUEST = """\
Mutation analysis of your suite: each change below was made alone to the program's source
(paths relative to /src) and built, and every test of your suite still passes on it, so a
rebuild with the same slip would pass too. These changes to the program survive your suite:
write tests whose expected output (stdout, stderr, exit status, files written) distinguishes
each changed program from the reference, i.e. inputs that run the changed line and whose
result the change alters. A change that alters no output at all cannot be caught; skip it.
Name the new files {prefix}<feature>.py, run them on the reference, and submit.

{survivors}"""


class Change(Protocol):
    """A mutant as the report names it (`Survivor`, `Mutant`)."""

    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def operator(self) -> str: ...
    @property
    def original(self) -> str: ...
    @property
    def replacement(self) -> str: ...


def revision_request(changes: Sequence[Change], repo: Path, limit: int = 40, radius: int = 3) -> str:
    """The request: at most `limit` changes, each with `radius` lines of source either side."""
    sources: dict[str, list[str]] = {}
    shown = changes[:limit]
    parts = [_change_text(i, c, _lines(repo, c.file, sources), radius) for i, c in enumerate(shown, 1)]
    if len(changes) > len(shown):
        parts.append(f"(and {len(changes) - len(shown)} more changes)")
    return REQUEST.format(prefix=AGENT_PREFIX, survivors="\n\n".join(parts))


def _lines(repo: Path, file: str, cache: dict[str, list[str]]) -> list[str]:
    if file not in cache:
        try:
            cache[file] = source_path(repo, file).read_text(errors="replace").splitlines()
        except OSError:  # the change is still named, without its context
            cache[file] = []
    return cache[file]


def _change_text(index: int, change: Change, lines: list[str], radius: int) -> str:
    head = (
        f"{index}. {change.file}:{change.line} ({change.operator}): "
        f"`{_short(change.original)}` replaced by `{_short(change.replacement)}`"
    )
    low, high = max(1, change.line - radius), min(len(lines), change.line + radius)
    context = [f"{'>' if n == change.line else ' '} {n:5d} | {lines[n - 1]}" for n in range(low, high + 1)]
    return "\n".join([head, *context])


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
