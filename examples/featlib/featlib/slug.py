"""Slugs: short, URL-safe names made from titles."""

from __future__ import annotations

from featlib.util import clamp, words


def slugify(title: str, separator: str = "-", max_length: int = 40) -> str:
    """A URL-safe slug of `title`: its words joined by `separator`, cut at a word boundary so
    that it is at most `max_length` characters long (one word is cut if it is longer)."""
    parts = words(title)
    if not parts:
        return ""
    max_length = clamp(max_length, 1, 200)
    out = parts[0][:max_length]
    for part in parts[1:]:
        if len(out) + len(separator) + len(part) > max_length:
            break
        out = f"{out}{separator}{part}"
    return out


def unique_slug(title: str, taken: set[str], separator: str = "-") -> str:
    """`slugify(title)`, with `-2`, `-3`, ... appended until it is not in `taken`."""
    base = slugify(title, separator) or "item"
    if base not in taken:
        return base
    n = 2
    while f"{base}{separator}{n}" in taken:
        n += 1
    return f"{base}{separator}{n}"
