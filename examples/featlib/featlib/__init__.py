"""featlib: word statistics, slugs and plain-text tables."""

from featlib.defaults import DEFAULTS

__all__ = ["DEFAULTS"]
