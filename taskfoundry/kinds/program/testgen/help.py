"""A program's help text, captured once per task (by the cleanroom stage, which ships it as
docs); the explorer parses it and the usage dummies print it."""

from __future__ import annotations

import re

from taskfoundry.kinds.program.testgen.probes import Probe, RunnerJob, run_probes
from taskfoundry.kinds.program.testgen.usage import parse_usage
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import Sandbox

HELP_FLAGS = ("--help", "-h")
_USAGE_WORD = re.compile(r"^\s*usage\b", re.I | re.M)


def capture_usage(
    sandbox: Sandbox, executable: str, timeout: float = 10.0, argv0: str = WORKSPACE_EXECUTABLE
) -> dict[str, str]:
    """Help text of the program and of each of its subcommands."""
    job = RunnerJob(executable=executable, timeout=timeout, argv0=argv0)
    texts: dict[str, str] = {}
    outs = run_probes(sandbox, job, [Probe((flag,)) for flag in HELP_FLAGS] + [Probe(())])
    # help that exits 0 first; else a usage message on an error (`figlet -h`: stderr, exit 1);
    # last, the usage a call without arguments prints (uutils' diffutils knows no --help)
    *helps, bare = outs
    for out in [*sorted(helps, key=lambda o: o.exit_code != 0), bare]:
        text = (out.stdout or "") + (out.stderr or "")
        if text.strip() and ((out.exit_code == 0 and out is not bare) or _USAGE_WORD.search(text)):
            texts[""] = text
            break
    commands = parse_usage(texts.get("", "")).commands
    probes = [Probe((cmd, "--help")) for cmd in commands]
    for cmd, out in zip(commands, run_probes(sandbox, job, probes), strict=True):
        if out.exit_code == 0 and out.stdout:
            texts[cmd] = out.stdout
    return texts
