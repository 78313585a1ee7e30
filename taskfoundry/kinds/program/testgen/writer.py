"""Write kept probes as exact-output pytest tests, one file per command."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from taskfoundry.assets.grading.tfrun import CLOCK_MARK, HERE_MARK
from taskfoundry.kinds.program.testgen.explorer import Kept
from taskfoundry.naming import junit_name

HEADER = (
    '"""Behavioral tests for `{program}`, written by the taskfoundry explorer (seed {seed})."""\n'
    "\nfrom tfrun import {imports}\n"
)


@dataclass(frozen=True)
class WrittenTest:
    file: str  # e.g. test_select.py
    function: str
    kept: int = -1  # its probe's position in the list of kept probes

    @property
    def junit_name(self) -> str:
        """`classname.name` as JUnit reports it when run from the workspace root."""
        return junit_name(self.file, self.function)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:40] or "run"


def _group(kept: Kept) -> str:
    args = kept.probe.args
    return _slug(args[0]) if args and not args[0].startswith("-") and not _is_file(kept, args[0]) else "main"


def _is_file(kept: Kept, arg: str) -> bool:
    return any(name == arg for name, _ in kept.probe.files)


def call_timeout(slow_timeout: float | None) -> float | None:
    """Each call's seconds in the tests of a program explored with `slow_timeout` (None: not
    slow, tfrun's own 2 × 5 s): twice its probe time, as tfrun's is twice the probe's 5 s.
    Its mutants get the same (mutate.stage._for_slow)."""
    return 2 * slow_timeout if slow_timeout else None


def render_tests(
    kept: list[Kept], program: str, seed: int, timeout: float | None = None
) -> tuple[dict[str, str], list[WrittenTest]]:
    """Returns {file name: source} and the tests in the order written (grouped by command,
    not in the order of `kept`: `WrittenTest.kept` says which probe each test runs).
    `timeout`: each call's seconds, for a slow program (None: tfrun's own)."""
    groups: dict[str, list[tuple[int, Kept]]] = defaultdict(list)
    for index, item in enumerate(kept):
        groups[_group(item)].append((index, item))
    files: dict[str, str] = {}
    written: list[WrittenTest] = []
    counter = 0
    for group in sorted(groups):
        parts = [
            HEADER.format(program=program, seed=seed, imports=_imports([item for _, item in groups[group]]))
        ]
        keys = _file_keys([item for _, item in groups[group]])
        if keys:
            shared = dict(sorted((key, content) for (_, content), key in keys.items()))
            parts.append(f"\n# Input files the tests write before running the program.\nFILES = {shared!r}\n")
        fname = f"test_{group}.py"
        for index, item in groups[group]:
            counter += 1
            name = f"test_{_slug('_'.join(item.probe.args[:4]))}_{counter:04d}"
            parts.append(_render_one(item, name, program, timeout, keys))
            written.append(WrittenTest(fname, name, index))
        files[fname] = "\n".join(parts)
    return files, written


def _render_one(
    item: Kept, name: str, program: str, timeout: float | None, keys: dict[tuple[str, str | bytes], str]
) -> str:
    probe, out = item.probe, item.outcome
    shown = " ".join(probe.args) or "(no arguments)"
    what = "stdout, stderr, exit status" + (" and files written" if out.files else "")
    kwargs = [repr(list(probe.args))]
    if probe.stdin:
        kwargs.append(f"stdin={probe.stdin!r}")
    if probe.files:
        inner = ", ".join(f"{name!r}: FILES[{keys[(name, content)]!r}]" for name, content in probe.files)
        kwargs.append(f"files={{{inner}}}")
    kwargs.append("cwd=tmp_path")
    if timeout:
        kwargs.append(f"timeout={timeout:g}")
    lines = [
        f"def {name}(tmp_path):",
        f'    """CATCHES: a rebuild whose {what} for `{program} {_doc(shown)}`'
        f'{" with input on stdin" if probe.stdin else ""} differ from the reference."""',
        f"    result = run({', '.join(kwargs)})",
        f"    assert result.returncode == {out.exit_code}",
        f"    assert {_read('result.stdout', out.stdout)} == {out.stdout!r}",
        f"    assert {_read('result.stderr', out.stderr)} == {out.stderr!r}",
    ]
    for path, content in sorted(out.files.items()):
        if content is None:  # not text: that it is written (the gold's bytes need not repeat)
            lines.append(f"    assert (tmp_path / {path!r}).is_file()")
        else:
            lines.append(f"    assert {_read(f'(tmp_path / {path!r}).read_text()', content)} == {content!r}")
    return "\n\n" + "\n".join(lines) + "\n"


def _read(expr: str, expected: str | None) -> str:
    """How a test reads an output: through tfrun's `clock` where the reference's showed a
    clock (the explorer wrote its stamps CLOCK_MARK), through `here` where it named its own
    directory (the probe runner wrote it HERE_MARK; stdout and stderr alone)."""
    if expected is not None and CLOCK_MARK in expected:
        expr = f"clock({expr})"
    if expected is not None and HERE_MARK in expected and expr.startswith(("result.", "clock(result.")):
        expr = f"here({expr}, tmp_path)"
    return expr


def _imports(items: list[Kept]) -> str:
    """The tfrun names a file's tests use."""
    outs = [item.outcome for item in items]
    clocked = any(CLOCK_MARK in (t or "") for o in outs for t in (o.stdout, o.stderr, *o.files.values()))
    placed = any(HERE_MARK in (t or "") for o in outs for t in (o.stdout, o.stderr))
    return ", ".join([*(["clock"] if clocked else []), *(["here"] if placed else []), "run"])


def _file_keys(items: list[Kept]) -> dict[tuple[str, str | bytes], str]:
    """(file name, content) -> its key in the test file's FILES: the name, or where tests of
    the file write the same name with other contents (a dual's secret data in
    `data/access.log`), the name and a number: one key held the last content, and 17 of
    logsum's tests failed on the gold with another test's input."""
    contents: dict[str, list[str | bytes]] = {}
    for item in items:
        for name, content in item.probe.files:
            found = contents.setdefault(name, [])
            if content not in found:
                found.append(content)
    return {
        (name, content): name if len(found) == 1 else f"{name} #{i}"
        for name, found in contents.items()
        for i, content in enumerate(found, 1)
    }


def _doc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', "'''").replace("`", "'")[:120]
