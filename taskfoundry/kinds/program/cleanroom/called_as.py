"""The name a program is called by. Every task calls its program `/workspace/executable`, but a
multi-call binary picks what it does by the name in its argv[0]: uutils' diffutils answered
every call "executable: utility not supported" (48 tests of one error message), busybox says
"applet not found". Such a program is called by its own name, in the workspace, throughout:
the probes, the suite (eval/tests/program.json) and the mutation stage."""

from __future__ import annotations

import re

from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob, run_probes
from taskfoundry.layout import WORKSPACE, WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import Sandbox

# what the program is asked under either name: no arguments, and its help
ASKED = (Probe(()), Probe(("--help",)))
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def called_as(sandbox: Sandbox, executable: str, program: str, timeout: float = 10.0) -> str:
    """`f"{WORKSPACE}/{program}"` when the program called by that name does other than called
    as `WORKSPACE_EXECUTABLE` (each name's answers the same twice, so a program that prints
    a clock or a pid is not taken for one), else `WORKSPACE_EXECUTABLE`."""
    named = f"{WORKSPACE}/{program}"
    if named == WORKSPACE_EXECUTABLE or not _SAFE_NAME.fullmatch(program):
        return WORKSPACE_EXECUTABLE
    names = re.compile("|".join(map(re.escape, (named, WORKSPACE_EXECUTABLE, program, "executable"))))
    answers = []
    for argv0 in (WORKSPACE_EXECUTABLE, named):
        job = RunnerJob(executable=executable, timeout=timeout, argv0=argv0)
        seen = [_seen(out, names) for out in run_probes(sandbox, job, list(ASKED) * 2)]
        if seen[: len(ASKED)] != seen[len(ASKED) :]:
            return WORKSPACE_EXECUTABLE
        answers.append(seen[: len(ASKED)])
    return named if answers[0] != answers[1] else WORKSPACE_EXECUTABLE


def _seen(out: Outcome, names: re.Pattern[str]) -> tuple[int, str, str]:
    """An answer with either name written NAME, wherever it is: a program that prints the
    name it is called by in its usage, or its own name in its version, answers the same."""
    return out.exit_code, names.sub("NAME", out.stdout or ""), names.sub("NAME", out.stderr or "")
