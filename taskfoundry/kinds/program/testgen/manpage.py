"""A program's man pages as the explorer reads them: options, option values, examples.

Many programs document their options only in the man page (lowdown's `-h` prints a synopsis;
its output modes are named only in `lowdown.1`). The page is rendered to text by the host's
groff (`-mandoc` reads man(7) and mdoc(7) alike), where an option list reads like a GNU
option table; option values and examples come from the roff source, where the markup says
what they are: mdoc's `Fl T Ns Ar html` is `-Thtml`, and `.Dl`, `.Bd -literal`, `.nf` and
`.EX` blocks are shell lines.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from pathlib import Path

from taskfoundry.kinds.program.testgen.usage import Option, parse_usage

log = logging.getLogger(__name__)

#: Where projects keep their man pages: the top directory and the usual folders.
_WHERE = ("", "man/", "doc/", "docs/", "man1/", "doc/man/", "docs/man/")
#: Sections of user commands and administration: a library's pages (3) document no program.
_SECTIONS = ("1", "6", "8")
_LITERAL = {".nf": ".fi", ".EX": ".EE", ".Bd": ".Ed"}
_ESCAPES = {r"\-": "-", r"\e": "\\", r"\(aq": "'", r"\(dq": '"', r"\&": "", r"\ ": " ", r"\(ti": "~"}
_FONT = re.compile(r"\\f(?:[BIRPC]|\[[A-Z]*\]|\(\w\w)")
_NS_VALUE = re.compile(r"\bFl (\S+) Ns Ar ([\w.+-]+)")  # mdoc: -T immediately followed by html


def man_pages(repo: Path, limit: int = 8) -> list[Path]:
    """The repository's man pages of programs (sections 1, 6 and 8), at most `limit`."""
    found = [p for d in _WHERE for s in _SECTIONS for p in sorted(repo.glob(f"{d}*.{s}")) if p.is_file()]
    return found[:limit]


def render(page: Path, timeout: float = 20.0) -> str:
    """The page as groff sets it for a wide terminal, without emphasis; "" if groff is
    missing or fails (a page is a help, never a requirement)."""
    groff = shutil.which("groff")
    if groff is None:
        log.info("%s: groff is not installed; the man page's options are not read", page.name)
        return ""
    cmd = [groff, "-mandoc", "-Tutf8", "-P-cbou", "-rLL=200n", "-rIN=4n", str(page)]
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return ""
    return done.stdout.decode(errors="replace") if done.returncode == 0 else ""


def unescape(line: str) -> str:
    """A roff line as the reader sees it: `\\-` a dash, font changes gone."""
    line = _FONT.sub("", line)
    for escape, text in _ESCAPES.items():
        line = line.replace(escape, text)
    return line


def literal_lines(text: str) -> list[str]:
    """The shell lines a page shows: `.Dl` lines and the lines of literal blocks."""
    out: list[str] = []
    closing: str | None = None
    for line in text.splitlines():
        macro = line.split(" ", 1)[0]
        if closing is not None:
            if macro == closing:
                closing = None
            elif not line.startswith("."):
                out.append(unescape(line).strip())
        elif macro == ".Dl":
            out.append(unescape(line[4:]).strip())
        elif macro in _LITERAL and (macro != ".Bd" or "-literal" in line or "-unfilled" in line):
            closing = _LITERAL[macro]
    return [line for line in out if line]


def option_values(text: str) -> list[tuple[str, str]]:
    """(flag, value) pairs the page writes as one word: mdoc's `Fl T Ns Ar html`."""
    return [(f"-{flag}", value) for flag, value in _NS_VALUE.findall(text)]


def man_options(repo: Path) -> list[Option]:
    """The options the repository's man pages list, as their rendered option lists read."""
    return [opt for page in man_pages(repo) for opt in parse_usage(render(page)).options]
