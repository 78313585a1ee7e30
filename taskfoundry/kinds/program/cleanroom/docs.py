"""Pick the usage documentation a worker gets; strip implementation from it."""

from __future__ import annotations

import re
from pathlib import Path

from taskfoundry.kinds.program.cleanroom.assets import BUILD_EXT, BUILD_NAMES
from taskfoundry.layout import WORKSPACE_EXECUTABLE

_DOC_SUFFIXES = {".md", ".txt", ".rst", ".adoc", ""}
_MAN = re.compile(r"\.[1-8]$")
# sections 2 and 3 document system calls and a library's API (cmark.3 is cmark.h in
# troff): the implementation's interface, not the program's usage
_API_MAN = re.compile(r"\.[23]\w*$")
_CODE_LANGS = {
    "c",
    "h",
    "cpp",
    "c++",
    "cc",
    "rust",
    "rs",
    "go",
    "golang",
    "python",
    "py",
    "java",
    "js",
    "javascript",
    "ts",
    "typescript",
    "zig",
    "haskell",
    "ruby",
}
_FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n.*?^```[ \t]*$\n?", re.S | re.M)
_RST_DIRECTIVE = re.compile(r"^\s*\.\.\s+(code-block|code|sourcecode|literalinclude)::\s*([\w+-]*)")
_SKIP_NAMES = {"CONTRIBUTING", "HACKING", "CHANGELOG", "INSTALL", "BUILDING", "DEVELOPING"}


def strip_code_blocks(text: str) -> str:
    """Remove fenced (Markdown) and directive (reST) blocks in programming languages; keep
    shell, console and plain ones."""

    def repl(match: re.Match[str]) -> str:
        lang = match.group(1).lower()
        return "" if lang in _CODE_LANGS else match.group(0)

    return _strip_rst_code(_FENCE.sub(repl, text))


def _strip_rst_code(text: str) -> str:
    """`.. code-block:: python` and its indented body go; `literalinclude` always (it pulls
    a source file in when the docs are built)."""
    out: list[str] = []
    skip_indent: int | None = None
    for line in text.splitlines(keepends=True):
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None and (not line.strip() or indent > skip_indent):
            continue
        skip_indent = None
        found = _RST_DIRECTIVE.match(line)
        if found and (found.group(1) == "literalinclude" or found.group(2).lower() in _CODE_LANGS):
            skip_indent = indent
            continue
        out.append(line)
    return "".join(out)


def collect_docs(repo: Path) -> dict[str, str]:
    """README, docs/ and man pages (relative path -> text), implementation removed."""
    found: dict[str, str] = {}
    candidates = list(repo.glob("README*")) + list(repo.glob("*.[1-8]"))
    for sub in ("doc", "docs", "man"):
        if (repo / sub).is_dir():
            candidates += [p for p in (repo / sub).rglob("*") if p.is_file()]
    for path in sorted(set(candidates)):
        if path.stem.upper() in _SKIP_NAMES or _build_file(path) or _api_page(repo, path):
            continue
        if path.suffix.lower() not in _DOC_SUFFIXES and not _MAN.search(path.name):
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        found[path.relative_to(repo).as_posix()] = strip_code_blocks(text)
    return found


def _build_file(path: Path) -> bool:
    """man/CMakeLists.txt has a doc suffix; it is still build material."""
    return path.name.lower() in BUILD_NAMES or path.suffix.lower() in BUILD_EXT


def _api_page(repo: Path, path: Path) -> bool:
    parts = path.relative_to(repo).parts
    return bool(_API_MAN.search(path.name)) or any(p in {"man2", "man3"} for p in parts[:-1])


def usage_docs(usage: dict[str, str], program: str) -> dict[str, str]:
    """Captured `--help` output as docs/usage/<command>.txt."""
    return {f"docs/usage/{cmd or program}.txt": text for cmd, text in sorted(usage.items())}


#: Where the cleanroom tells the worker about the two copies of the program (ProgramBench#60:
#: agents overwrite `./executable`, their only oracle).
REFERENCE_NOTE_PATH = "docs/REFERENCE.md"
REFERENCE_NOTE = """# The reference program

`/workspace/executable` is the program to rebuild. Your build replaces it; the same
program stays runnable at `{reference}`, which cannot be deleted or replaced.
"""


CALLED_AS_NOTE = """
The tests run `/workspace/executable` with argv[0] set to `{argv0}`: the program picks what it
does by the name it is called by, and called as `executable` it does other things. Call the
reference the same way: `bash -c 'exec -a {argv0} {reference} ARGS'`.
"""


def reference_note(reference: str, argv0: str = WORKSPACE_EXECUTABLE) -> dict[str, str]:
    text = REFERENCE_NOTE.format(reference=reference)
    if argv0 != WORKSPACE_EXECUTABLE:
        text += CALLED_AS_NOTE.format(argv0=argv0, reference=reference)
    return {REFERENCE_NOTE_PATH: text}
