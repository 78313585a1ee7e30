"""Invocations of the program shown in its docs and usage text, with what they feed it.

README and --help examples are the author's own picks of what matters, so they are
probed first. Shell lines are read with the pipes and redirections a reader would see:
`echo '{"a":1}' | prog -m` feeds stdin, `prog -t $'\\t' <foo.json | less` reads a file
on stdin, and what follows the program in a pipeline (a pager, gzip) is dropped.
"""

from __future__ import annotations

import codecs
import re
import shlex
from dataclasses import dataclass

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")
_PROMPT = re.compile(r"^\s*(?:[$%#>]\s+)?")
_FD_REDIRECT = re.compile(r"(?<=\s)\d>>?&?\S*")  # 2>/dev/null, 2>&1


@dataclass(frozen=True)
class Example:
    """One invocation: argv without the program name, stdin text or a file to read as stdin."""

    argv: tuple[str, ...]
    stdin: str | None = None
    stdin_file: str | None = None


def doc_examples(texts: list[str], names: set[str]) -> list[Example]:
    """Every distinct invocation of the program (called by any of `names`) in code blocks,
    indented blocks or prompt lines."""
    found: list[Example] = []
    for text in texts:
        for line in _candidate_lines(text):
            example = parse_invocation(line, names)
            if example is not None and example not in found:
                found.append(example)
    return found


def _candidate_lines(text: str) -> list[str]:
    lines = [ln for block in _FENCE.findall(text) for ln in block.splitlines()]
    lines += [ln for ln in text.splitlines() if ln.startswith(("    ", "\t", "$ "))]
    return [ln.strip() for ln in lines if ln.strip()]


def parse_invocation(line: str, names: set[str]) -> Example | None:
    """The invocation of the program on a shell line, or None if it does not run it."""
    line = _ANSI_C.sub(lambda m: shlex.quote(_unescape(m.group(1))), _PROMPT.sub("", line, count=1))
    line = _FD_REDIRECT.sub("", line)
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars="|<>;&")
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:
        return None
    segments = _split(tokens)
    for i, seg in enumerate(segments):
        if seg and (seg[0] in names or seg[0].rsplit("/", 1)[-1] in names):
            before = segments[i - 1] if i > 0 else []
            example = _with_redirects(seg[1:], _fed_text(before))
            if example and len(before) == 2 and before[0] == "cat":
                example = Example(example.argv, stdin_file=before[1])  # cat FILE | prog
            return example
    return None


def _unescape(body: str) -> str:
    try:
        return codecs.decode(body, "unicode_escape")
    except UnicodeDecodeError:
        return body


def _split(tokens: list[str]) -> list[list[str]]:
    """Pipeline segments; anything after `;`, `&&` or `||` is another command, dropped."""
    segments: list[list[str]] = [[]]
    for tok in tokens:
        if tok == "|":
            segments.append([])
        elif tok in {";", "&&", "||", "&", ";;"}:
            break
        else:
            segments[-1].append(tok)
    return segments


def _fed_text(seg: list[str]) -> str | None:
    """What `echo X` or `printf X` before the pipe writes."""
    if len(seg) == 2 and seg[0] == "echo":
        return seg[1] + "\n"
    if len(seg) == 2 and seg[0] == "printf" and "%" not in seg[1]:
        return _unescape(seg[1])
    return None


def _with_redirects(args: list[str], stdin: str | None) -> Example | None:
    argv: list[str] = []
    stdin_file = None
    it = iter(args)
    for tok in it:
        if tok in {"<", ">", ">>", ">&", "<<"}:
            target = next(it, None)
            if tok == "<":
                stdin_file = target
            elif tok == "<<":
                return None  # a here-document spans lines we do not have
            continue
        if tok.startswith(("2>", ">")):
            continue
        argv.append(tok)
    return Example(tuple(argv), stdin, stdin_file)
