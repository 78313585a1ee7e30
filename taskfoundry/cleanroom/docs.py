"""Pick the usage documentation a worker gets; strip implementation from it."""

from __future__ import annotations

import re
from pathlib import Path

from taskfoundry.cleanroom.assets import BUILD_EXT, BUILD_NAMES

_DOC_SUFFIXES = {".md", ".txt", ".rst", ".adoc", ""}
_MAN = re.compile(r"\.[1-8]$")
# sections 2 and 3 document system calls and a library's API (cmark.3 is cmark.h in
# troff): the implementation's interface, not the program's usage
_API_MAN = re.compile(r"\.[23]\w*$")
_CODE_LANGS = {"c", "h", "cpp", "c++", "cc", "rust", "rs", "go", "golang", "python", "py",
               "java", "js", "javascript", "ts", "typescript", "zig", "haskell", "ruby"}  # fmt: skip
_FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n.*?^```[ \t]*$\n?", re.S | re.M)
_SKIP_NAMES = {"CONTRIBUTING", "HACKING", "CHANGELOG", "INSTALL", "BUILDING", "DEVELOPING"}


def strip_code_blocks(text: str) -> str:
    """Remove fenced blocks in programming languages; keep shell, console and plain ones."""

    def repl(match: re.Match[str]) -> str:
        lang = match.group(1).lower()
        return "" if lang in _CODE_LANGS else match.group(0)

    return _FENCE.sub(repl, text)


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
