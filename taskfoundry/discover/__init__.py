"""Discovery: candidate sources released after a date, found in the registries (PyPI, the
crate registry, Debian), each with its release date and a verdict per task kind."""
