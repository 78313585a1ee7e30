"""Tree-sitter side of the leak scan: is a text source code, and where do docs repeat the source.

Source files are tokenised from their tree-sitter parse: comments are dropped and every
string or character literal becomes one placeholder token, so usage text that a program
prints (and that the docs legitimately repeat) never matches. Docs are tokenised with a
regular lexer that treats comments and literals the same way for the source's languages.
A window of `k` consecutive tokens (a shingle) present in both is verbatim source.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tree_sitter import Node, Query, QueryCursor, Tree

from taskfoundry.syntax.languages import EXT_LANGUAGE, GENERIC_CODE
from taskfoundry.syntax.parse import GRAMMARS, language, parse

log = logging.getLogger(__name__)

DEFINITIONS = {
    "c": "[(function_definition) (struct_specifier body: (_)) (enum_specifier body: (_))"
    " (union_specifier body: (_))] @def",
    "cpp": "[(function_definition) (class_specifier body: (_)) (struct_specifier body: (_))"
    " (namespace_definition)] @def",
    "rust": "[(function_item) (struct_item) (enum_item) (impl_item) (trait_item) (mod_item body: (_))] @def",
    "go": "[(function_declaration) (method_declaration) (type_declaration)] @def",
    "python": "[(function_definition) (class_definition)] @def",
}
# What every definition of DEFINITIONS has in its text, so a text without it has none there
# and is not parsed as that language: parsing is most of the cleanroom's time on data-heavy
# programs (figlet's fonts: five grammars a font). C's and C++'s bodies and namespaces have
# braces; C++'s `= default;` and `= delete;` have none (comments may stand after the `=`).
_NEEDS = {
    "c": re.compile(rb"\{"),
    "cpp": re.compile(rb"\{|=(?:\s|/\*.*?\*/|//[^\n]*)*(?:default|delete)\b", re.S),
    "rust": re.compile(rb"\b(?:fn|struct|enum|impl|trait|mod)\b"),
    "go": re.compile(rb"\b(?:func|type)\b"),
    "python": re.compile(rb"\b(?:def|class)\b"),
}
COMMENT_NODES = {"comment", "line_comment", "block_comment"}
STRING_NODES = {
    "string_literal",
    "char_literal",
    "raw_string_literal",
    "interpreted_string_literal",
    "rune_literal",
    "string",
}
STR = "\x00str"  # the placeholder token of every string or character literal
_TOKEN = r"\w+|[^\w\s]"
_C_COMMENTS = [r"//[^\n]*", r"/\*[\s\S]{0,4000}?\*/"]
_DQ = r'"(?:\\[\s\S]|[^"\\\n])*"'
_DQ_MULTILINE = r'"(?:\\[\s\S]|[^"\\])*"'
_LEXERS = {
    "c": (_C_COMMENTS, [_DQ, r"'(?:\\.|[^'\\\n]){1,4}'"]),
    "rust": (
        _C_COMMENTS,
        [
            r'\bb?r(?P<h>#*)"[\s\S]*?"(?P=h)',
            r"(?:\bb)?" + _DQ_MULTILINE,
            r"(?:\bb)?'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^'\\\n])'",
        ],
    ),
    "go": (_C_COMMENTS, [_DQ, r"`[^`\n]*`", r"'(?:\\.|[^'\\\n]){1,10}'"]),
    "python": (
        [r"#[^\n]*"],
        [
            r"(?:\b[rRbBuUfF]{1,2})?(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\""
            r"|'(?:\\.|[^'\\\n])*'|" + _DQ + ")"
        ],
    ),
}
_LEXERS["cpp"] = _LEXERS["c"]


@cache
def _definitions(name: str) -> Query:
    return Query(language(name), DEFINITIONS[name])


@cache
def _lexer(name: str) -> re.Pattern[str]:
    comments, strings = _LEXERS[name]
    return re.compile("(?P<s>" + "|".join(strings) + ")|(?P<c>" + "|".join(comments) + ")|" + _TOKEN)


# --- is this text source code? --------------------------------------------------------


@dataclass(frozen=True)
class ParseHit:
    """A text that parses as source: its language and its definitions."""

    language: str
    definitions: int
    first_line: int
    error_ratio: float


def error_bytes(node: Node) -> int:
    """Bytes covered by ERROR nodes (only subtrees that contain an error are visited). A loop,
    not recursion: prose parsed as C nests errors deeper than Python's stack (GNU hello's
    ABOUT-NLS)."""
    total, todo = 0, [node]
    while todo:
        item = todo.pop()
        if item.type == "ERROR" or item.is_missing:
            total += max(item.end_byte - item.start_byte, 1)
        else:
            todo += [child for child in item.children if child.has_error]
    return total


_PARSED: dict[tuple[bytes, float], ParseHit | None] = {}
_PARSED_MAX = 50_000


def parse_as_source(data: bytes, max_error_ratio: float = 0.02) -> ParseHit | None:
    """The best language under which `data` is real code: (almost) no syntax errors and at
    least one definition (function, type, impl) parsed without error. Data files and prose
    that happen to be valid expressions have no definitions, so they never qualify.

    Remembered by content: the cleanroom stage asks about the same bytes up to four times
    (a test asset, the same file installed as runtime data, and both again in the scan;
    figlet's 57 fonts cost 7 s a round before `_NEEDS` spared most of them the parse)."""
    key = (hashlib.sha256(data).digest(), max_error_ratio)
    if key not in _PARSED:
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = _parse_as_source(data, max_error_ratio)
    return _PARSED[key]


def _parse_as_source(data: bytes, max_error_ratio: float) -> ParseHit | None:
    if not data.strip() or b"\x00" in data:
        return None
    best: ParseHit | None = None
    for lang in GRAMMARS:
        if not _NEEDS[lang].search(data):
            continue  # no definition can be there
        tree = parse(data, lang)
        ratio = error_bytes(tree.root_node) / len(data) if tree.root_node.has_error else 0.0
        if ratio > max_error_ratio:
            continue
        found = QueryCursor(_definitions(lang)).captures(tree.root_node).get("def", [])
        defs = [n for n in found if not n.has_error and n.end_byte - n.start_byte >= 20]
        if defs and (best is None or len(defs) > best.definitions):
            first = min(n.start_point.row for n in defs) + 1
            best = ParseHit(lang, len(defs), first, round(ratio, 4))
    return best


# --- tokens -------------------------------------------------------------------------


Token = tuple[str, int]  # (text, 1-based line)


def _leaves(tree: Tree) -> Iterator[Node]:
    """Leaf nodes in order, with comments skipped and string literals kept whole."""
    cursor = tree.walk()
    while True:
        node = cursor.node
        assert node is not None
        descend = node.type not in COMMENT_NODES and node.type not in STRING_NODES
        if node.type in STRING_NODES or (descend and node.child_count == 0):
            yield node
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def source_tokens(data: bytes, lang: str) -> list[Token]:
    """Tokens of a source file from its tree-sitter parse."""
    out: list[Token] = []
    for node in _leaves(parse(data, lang)):
        line = node.start_point.row + 1
        if node.type in STRING_NODES:
            out.append((STR, line))
            continue
        text = (node.text or b"").decode("utf-8", "replace")
        # a leaf can hold several tokens (a macro body): lex it as the docs are lexed
        out.extend((tok, line + extra - 1) for tok, extra in text_tokens(text, lang))
    return out


def text_tokens(text: str, lang: str) -> list[Token]:
    """Tokens of any text (docs) with the lexer of `lang`: comments dropped, literals as one."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    out: list[Token] = []
    for m in _lexer(lang).finditer(text):
        if m.group("c") is not None:
            continue
        line = bisect.bisect_left(newlines, m.start()) + 1
        out.append((STR if m.group("s") is not None else m.group(0), line))
    return out


def _windows(tokens: list[Token], k: int) -> Iterator[tuple[int, int]]:
    """(position, hash) of every k-token window with enough distinct tokens to mean something,
    names among them: a run of numbers and commas is a table of constants, which a format's
    specification publishes as the implementation holds it (zstd's default distributions in
    its compression format document), not code."""
    words = [t for t, _ in tokens]
    for i in range(len(words) - k + 1):
        window = tuple(words[i : i + k])
        distinct = set(window)
        if len(distinct) >= max(k // 4, 2) and sum(1 for w in distinct if _NAME.match(w)) >= MIN_NAMES:
            yield i, hash(window)


_NAME = re.compile(r"[A-Za-z_]\w*$")
MIN_NAMES = 3  # distinct names (identifiers, keywords) a window of code has


# --- the index of the original source and runs found in docs ------------------------


@dataclass
class SourceIndex:
    """Shingles of the original source: hash -> (file number, line of its first token)."""

    k: int
    files: list[str] = field(default_factory=list)
    origins: dict[int, tuple[int, int]] = field(default_factory=dict)
    languages: set[str] = field(default_factory=set)
    tokens: int = 0


@dataclass(frozen=True)
class Run:
    """A verbatim run of source tokens inside a text."""

    tokens: int
    first_line: int
    last_line: int
    source_file: str
    source_line: int


SKIP_DIRS = {".git", "target", "node_modules", ".hg", ".svn"}  # VCS data and build output


def source_files(root: Path, max_bytes: int = 2 << 20) -> Iterator[tuple[Path, str]]:
    """(path, language) of every code file under `root`, skipping VCS and build trees."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS for part in rel.parts) or not path.is_file():
            continue
        ext = path.suffix.lower()
        lang = EXT_LANGUAGE.get(ext) or ("c" if ext in GENERIC_CODE else None)
        if lang and path.stat().st_size <= max_bytes:
            yield path, lang


def build_index(root: Path, k: int = 40) -> SourceIndex:
    index = SourceIndex(k=k)
    for path, lang in source_files(root):
        data = path.read_bytes()
        ext = path.suffix.lower()
        if ext in EXT_LANGUAGE:
            tokens = source_tokens(data, lang)
        else:
            tokens = text_tokens(data.decode("utf-8", "replace"), lang)
        number = len(index.files)
        index.files.append(path.relative_to(root).as_posix())
        index.languages.add(lang)
        index.tokens += len(tokens)
        for pos, key in _windows(tokens, k):
            index.origins.setdefault(key, (number, tokens[pos][1]))
    log.debug(
        "source index: %d files, %d tokens, %d shingles", len(index.files), index.tokens, len(index.origins)
    )
    return index


def find_runs(index: SourceIndex, text: str) -> list[Run]:
    """Verbatim runs of at least `index.k` source tokens in `text`, under each source language."""
    runs: list[Run] = []
    for lang in sorted(index.languages):
        runs += _runs_for(index, text_tokens(text, lang))
    runs.sort(key=lambda r: (r.first_line, -r.tokens))
    kept: list[Run] = []
    for run in runs:  # one language's run may repeat another's: keep the first, longest
        if not kept or run.first_line > kept[-1].last_line:
            kept.append(run)
    return kept


def _runs_for(index: SourceIndex, tokens: list[Token]) -> list[Run]:
    k = index.k
    runs: list[Run] = []
    start = last = -1
    origin = (0, 0)
    for pos, key in _windows(tokens, k):
        if key not in index.origins:
            continue
        if start >= 0 and pos <= last + 1:
            last = pos
            continue
        if start >= 0:
            runs.append(_run(index, tokens, start, last, origin))
        start = last = pos
        origin = index.origins[key]
    if start >= 0:
        runs.append(_run(index, tokens, start, last, origin))
    return runs


def _run(index: SourceIndex, tokens: list[Token], start: int, last: int, origin: tuple[int, int]) -> Run:
    end = last + index.k - 1
    return Run(
        tokens=end - start + 1,
        first_line=tokens[start][1],
        last_line=tokens[end][1],
        source_file=index.files[origin[0]],
        source_line=origin[1],
    )
