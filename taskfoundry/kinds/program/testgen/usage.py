"""Read a program's usage text: its options (with metavars and choices) and subcommands.

Three shapes are read: GNU-style option tables ("  -d, --delimiter CHAR   ..."), the
same with the description on the lines below (clap's long help, argparse), and the
bracketed groups of a synopsis line ("usage: figlet [ -ckl ] [ -f fontfile ]"), which is
all that many small non-GNU programs print. A synopsis also gives the bare flags of forms
printed one a line, and argparse's subcommands as its brace group ("{extract,create} ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property

# a value after a flag: "CHAR", "<file>", "{a,b}", "[=N]", "=FILE", " file" (getopts style;
# the two spaces before a description keep it apart from a description's first word)
_VALUE = r"(?:[ =]?(?:<[\w.|-]+>|\{[\w.,|-]+\}|[A-Z][\w|-]*)|\[=?[A-Za-z]\w*\]|[ =][a-z][\w-]*)"
_FLAG = re.compile(r"(-{1,2}[\w?][\w-]*)(" + _VALUE + r")?")
_OPT = re.compile(
    r"^(?P<indent>\s{1,12})(?P<flags>-{1,2}[\w?][\w-]*"
    + _VALUE
    + r"?(?:,?\s?-{1,2}[\w?][\w-]*"
    + _VALUE
    + r"?)*)(?:(?:\s{2,}|\t)(?P<desc>.*))?$"
)
# "Commands:", and a multi-call binary's "Currently defined functions:" (uutils' diffutils,
# busybox), "Available commands:"
_COMMANDS_HEAD = re.compile(r"^\s*(?:[a-z]+ ){0,2}(sub)?(commands?|functions?|applets?)\s*:?\s*$", re.I)
# those functions listed on one line: "    cmp, diff" (busybox: "\t[, [[, acpid, addgroup,")
_CMD_LIST = re.compile(r"^\s{1,8}[^\s,]+(?:,\s*[^\s,]+)+,?\s*$")
_LISTED_CMD = re.compile(r"[a-z][\w.-]*")
# a command and its arguments' placeholders before its description (GLib's help): "  run
# [SUITE] [SECTION]   - Process...", "  publish SUITE [SECTION] - Export...", "  process-file
# SUITE SECTION FILE1 [FILE2 ...]" (its description on the next line): appstream-generator's
# seven commands were read as none
_ARGS = r"(?:\s(?:\[[^\]]*\]|<[^>]*>|[A-Z][A-Z0-9_]*|\.\.\.))*"
_CMD = re.compile(r"^\s{1,8}([a-z][\w-]*)(?:,\s*[a-z][\w-]*)?" + _ARGS + r"(?:(?:\s{2,}|\s-\s).*)?$")
# an option's line, not a description that starts with a dash ("  - Process new metadata")
_OPTION_START = re.compile(r"^\s*-{1,2}[\w?]")
# a list of words: "html, xml, man", "a, b or c", "'a', 'b'"
_WORD = r"['\"`]?[\w.+-]+['\"`]?"
_WORDS = _WORD + r"(?:(?:\s*,\s*(?:or\s+)?|\s+or\s+)" + _WORD + r")+"
_CHOICES = re.compile(
    r"possible values:\s*([\w.-]+(?:,\s*[\w.-]+)+)|(?:\b|^)((?:[\w.-]+\|)+[\w.-]+)\b"
    r"|\{([\w.-]+(?:,\s*[\w.-]+)+)\}"
    # in a description: "Specify output format (html, xml, man)", "one of: a, b or c"
    r"|\((" + _WORDS + r")\)|\bone of:?\s+(" + _WORDS + r")",
    re.IGNORECASE,
)
_PROSE_LIST = re.compile(r"([A-Za-z]+)\s*:\s*\[((?:\s*['\"][\w.-]+['\"],?)+)\s*\]")
_LISTED = re.compile(r"^[-*] ([\w.-]+):\s")
_SYNOPSIS = re.compile(r"^\s*usage\s*:", re.I)
_GROUP = re.compile(r"\[\s*(-[^\[\]]*?)\s*\]")
_BARE = re.compile(r"(?<![^\s|])(-{1,2}[A-Za-z?][\w-]*)(?=\s|$|\|)")
_BRACES = re.compile(r"\{[a-z][\w-]*(?:,[a-z][\w-]*)+\}")
_GROUP_OPT = re.compile(r"^(-{1,2}[\w?][\w-]*)(?:[ =]<?([A-Za-z][\w-]*)>?|[ =]\{([\w.,-]+)\})?$")


@dataclass(frozen=True)
class Option:
    """One option: its spellings, the metavar of its value (None for a flag), choices."""

    flags: tuple[str, ...]
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    description: str = ""

    @cached_property  # read for every option of every drawn probe: 2.7 million reads a tiny program's draw
    def name(self) -> str:
        longs = [f for f in self.flags if f.startswith("--")]
        return (longs or list(self.flags))[0]


@dataclass
class Usage:
    options: list[Option] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)


def parse_usage(text: str) -> Usage:
    """Options and commands from help text; tolerant of what it cannot read."""
    usage = Usage()
    in_commands = False
    current: tuple[int, int] | None = None  # (index into options, indent) of the last option
    lines = text.splitlines()
    for line in lines:
        if _COMMANDS_HEAD.match(line):
            in_commands, current = True, None
            continue
        if in_commands and _CMD_LIST.match(line):
            listed = [w.strip() for w in line.split(",")]
            usage.commands += [w for w in listed if _LISTED_CMD.fullmatch(w) and w not in usage.commands]
            continue
        if in_commands:
            cmd = _CMD.match(line)
            if cmd and not _OPTION_START.match(line):
                usage.commands.append(cmd.group(1))
                continue
            if line.strip():
                in_commands = bool(line.startswith(" ")) and not _OPTION_START.match(line)
        parsed = _parse_option(line)
        if parsed:
            current = _add(usage, parsed[0], parsed[1])
        elif current and not line.strip():
            continue  # clap separates a long description's paragraphs with blank lines
        elif current and _indent(line) > current[1]:
            _extend(usage, current[0], line.strip())  # description continued below the flags
        else:
            current = None
    for opt in _synopsis_options(lines):
        _add(usage, opt, 0)
    usage.commands += [c for c in _synopsis_commands(lines) if c not in usage.commands]
    _listed_choices(usage, text)
    return usage


def with_options(usage: Usage, options: list[Option]) -> Usage:
    """`usage` and, after its own, those of `options` none of whose spellings it knows (a man
    page's options beside the help text's)."""
    merged = Usage(list(usage.options), list(usage.commands))
    for opt in options:
        _add(merged, opt, 0)
    return merged


def _listed_choices(usage: Usage, text: str) -> None:
    """Choices listed in prose for a metavar: "Available Characters: ['cow', 'tux']"."""
    for word, body in _PROSE_LIST.findall(text):
        values = tuple(re.findall(r"['\"]([\w.-]+)['\"]", body))
        word = word.lower().rstrip("s")
        for i, opt in enumerate(usage.options):
            if opt.metavar and not opt.choices and opt.metavar.lower().rstrip("s") == word:
                usage.options[i] = replace(opt, choices=values)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _add(usage: Usage, opt: Option, indent: int) -> tuple[int, int] | None:
    known = {f for o in usage.options for f in o.flags}
    if known & set(opt.flags):
        return None
    usage.options.append(opt)
    return len(usage.options) - 1, indent


def _extend(usage: Usage, index: int, more: str) -> None:
    opt = usage.options[index]
    desc = f"{opt.description} {more}".strip()
    listed = _LISTED.match(more)
    if listed and "possible values:" in opt.description.lower():  # clap: "- auto: ..." lines
        choices = (*opt.choices, listed.group(1))
    else:
        choices = opt.choices or _choices("", desc)
    usage.options[index] = replace(opt, description=desc, choices=choices)


def _parse_option(line: str) -> tuple[Option, int] | None:
    match = _OPT.match(line)
    if not match:
        return None
    flags: list[str] = []
    metavar = None
    for flag, value in _FLAG.findall(match.group("flags")):
        flags.append(flag)
        metavar = metavar or value.strip(" =[]<>") or None
    desc = (match.group("desc") or "").strip()
    choices = _choices(metavar or "", desc)
    if metavar and metavar.startswith("{"):
        metavar = "CHOICE"
    return Option(tuple(flags), metavar, choices, desc), len(match.group("indent"))


def _choices(metavar: str, desc: str) -> tuple[str, ...]:
    for text in (metavar, desc):
        found = _CHOICES.search(text)
        if found:
            raw = next(g for g in found.groups() if g)
            return tuple(c.strip(" '\"`") for c in re.split(r"[|,]|\bor\s", raw) if c.strip(" '\"`"))
    return ()


def _synopsis_options(lines: list[str]) -> list[Option]:
    """Options from the bracketed groups of the usage synopsis and its continuation lines."""
    out: list[Option] = []
    for block in _synopses(lines):
        for group in _GROUP.findall(" ".join(block)):
            out += _group_options(group)
        out += [Option((flag,)) for form in block for flag in _bare_flags(form)]
    return out


def _synopses(lines: list[str]) -> list[list[str]]:
    """Each usage synopsis with its continuation lines: argparse wraps a long one, and kas's
    brace group of subcommands stood on its third line (its 440 probes ran none of them)."""
    blocks: list[list[str]] = []
    for i, line in enumerate(lines):
        if not _SYNOPSIS.match(line):
            continue
        block = [line]
        for more in lines[i + 1 :]:
            if not more.strip() or not more.startswith((" ", "\t")):
                break
            block.append(more)
        blocks.append(block)
    return blocks


def _synopsis_commands(lines: list[str]) -> list[str]:
    """argparse's subcommands, a brace group in the synopsis that is no option's value:
    `usage: cph [-h] [-V] {extract,x,create,c} ...` (and no "commands:" heading: before this
    conda-package-handling's 206 probes all ran without one, and kept 11 tests)."""
    out: list[str] = []
    for block in _synopses(lines):
        words = _GROUP.sub(" ", _SYNOPSIS.sub(" ", " ".join(block))).split()
        for before, word in zip(["", *words], words, strict=False):
            if _BRACES.fullmatch(word) and not before.startswith("-"):
                out += [c for c in word.strip("{}").split(",") if c not in out]
    return out


def _bare_flags(form: str) -> list[str]:
    """The unbracketed flags of one form of a synopsis: acl's chacl prints its forms one a line,
    `executable -b acl dacl pathname...`, and without them all its 600 random probes ran bare."""
    outside = _GROUP.sub(" ", _SYNOPSIS.sub(" ", form))
    return [m[1] for m in _BARE.finditer(outside)]


def _group_options(group: str) -> list[Option]:
    """`-abc` (a cluster of single-letter flags), `-d dir`, `--width=N`, `-a | -b`."""
    out: list[Option] = []
    for part in (p.strip() for p in group.split("|")):
        match = _GROUP_OPT.match(part)
        if not match:
            continue
        flag, meta, choices = match.group(1), match.group(2), match.group(3)
        if choices:  # argparse: `[-l {debug,info}]`
            out.append(Option((flag,), "CHOICE", tuple(choices.split(","))))
            continue
        if not meta and re.fullmatch(r"-[A-Za-z0-9]{2,}", flag):
            out += [Option((f"-{c}",)) for c in flag[1:]]
        else:
            out.append(Option((flag,), meta.upper() if meta else None))
    return out
