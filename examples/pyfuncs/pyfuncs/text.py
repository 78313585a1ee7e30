"""Text."""

import re

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slugify(text: str, sep: str = "-") -> str:
    """Lower-case text with every run of other characters replaced by sep, trimmed."""
    slug = _NON_WORD.sub(sep, text.lower())
    if not sep:
        return slug
    return slug.strip(sep)


def run_length(text: str) -> list[tuple[str, int]]:
    """Run-length encoding: (character, count) for each run of equal characters."""
    runs: list[tuple[str, int]] = []
    for ch in text:
        if runs and runs[-1][0] == ch:
            runs[-1] = (ch, runs[-1][1] + 1)
        else:
            runs.append((ch, 1))
    return runs


def wrap_words(text: str, width: int) -> list[str]:
    """Greedy word wrap to lines of at most width characters (long words stay whole)."""
    if width < 1:
        raise ValueError("width must be positive")
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def shout(text: str) -> None:
    """Print text in capitals (I/O: no task)."""
    if text:
        print(text.upper())
