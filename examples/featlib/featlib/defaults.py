"""Defaults computed once, when featlib is imported."""

from __future__ import annotations


def build_defaults(width: int = 72) -> dict[str, object]:
    """The package's default settings: table width, slug separator, stop words."""
    if width < 20:
        raise ValueError("width must be at least 20")
    stop = sorted({"a", "an", "and", "the", "of", "to", "in"})
    return {"width": width, "separator": "-", "stop_words": stop, "max_slug": width // 2}


DEFAULTS = build_defaults()
