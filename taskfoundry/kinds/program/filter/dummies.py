"""Dummy executables: a test that passes on any of these asserts nothing about the program.

Versioned: change DUMMY_SET_VERSION when a dummy's behaviour changes.
"""

from __future__ import annotations

DUMMY_SET_VERSION = 1

_SCRIPTS = {
    "silent": "exit 0\n",
    "fail": "exit 1\n",
    "echo": 'echo "$@"\n',
    "cat": "exec cat\n",
    "usage": "cat <<'TF_USAGE_EOF'\n{usage}TF_USAGE_EOF\nexit 0\n",
    "usage-err": "cat >&2 <<'TF_USAGE_EOF'\n{usage}TF_USAGE_EOF\nexit 1\n",
}
DUMMY_NAMES = tuple(_SCRIPTS)
# built for each program from the gold's own outputs (testgen.replay), not from a script here
NO_LOGIC_NAMES = ("replay", "version", "help")


def render_dummy(name: str, usage: str) -> bytes:
    """The dummy `name` as a shell script; `usage` is the gold program's usage text."""
    if name not in _SCRIPTS:
        raise KeyError(f"unknown dummy {name!r}; known: {', '.join(DUMMY_NAMES)}")
    text = usage if usage.endswith("\n") or not usage else usage + "\n"
    return ("#!/bin/sh\n" + _SCRIPTS[name].replace("{usage}", text)).encode()
