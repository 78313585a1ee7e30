"""Inputs for probes: sample files from the repository, documented examples, option values."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from taskfoundry.kinds.program.testgen import manpage
from taskfoundry.kinds.program.testgen.docexamples import Example, doc_examples
from taskfoundry.kinds.program.testgen.docfiles import doc_pages, documented_files
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe
from taskfoundry.kinds.program.testgen.usage import Option

_TEXT_SUFFIXES = {
    "",
    ".txt",
    ".csv",
    ".tsv",
    ".log",
    ".calc",
    ".json",
    ".ini",
    ".conf",
    ".md",
    ".in",
    ".dat",
    ".expr",
    ".cfg",
    ".toml",
    ".yaml",
    ".yml",
    # markup and data formats a converter or a checker reads (xml-rs's tests/documents/*.xml:
    # without them its explorer fed it no XML and kept 39 tests)
    ".xml",
    ".html",
    ".htm",
    ".xhtml",
    ".svg",
    ".rst",
    ".tex",
    ".sql",
    ".jsonl",
    ".ndjson",
    ".properties",
    ".po",
    ".diff",
    ".patch",
}
# regress: BSD projects' test inputs (lowdown's regress/*.md)
_SAMPLE_DIRS = (
    "data",
    "examples",
    "samples",
    "testdata",
    "tests/data",
    "test/data",
    "tests",
    "test",
    "regress",
)
# the top directory's own documents, after the sample directories: a converter's natural input
# (cmark's README.md is Markdown; its tests are Python scripts and a 200 KB spec)
_TOP_DOCS = ("README*", "*.md")
# metavars whose value is a number: the whole name (N) or a part of it (OUTPUTWIDTH, INFOCODE)
_NUMERIC = (
    "NUM",
    "COUNT",
    "INT",
    "DIGITS",
    "SIZE",
    "LINES",
    "DEPTH",
    "WIDTH",
    "PREC",
    "LEVEL",
    "CODE",
    "MODE",
    "LEN",
    "COLS",
    "ROWS",
    "SECONDS",
    "TIMEOUT",
    "LIMIT",
    "MAX",
    "MIN",
)
# formats a program may be named for, whose documents the explorer draws (strategies.DOCUMENTS)
_FORMAT_SUFFIXES = (".xml", ".json", ".ini")
FORMAT_SAMPLES = 8
_NAMED_DATA = ("FILE", "FONT", "STYLE", "THEME", "NAME", "PATH", "DICT", "MAP", "TABLE")
_INLINE_VALUE = re.compile(r"(?<![\w-])(--?[\w-]+)=([^\s,;`'\"]+)")  # "--length=4KiB" in help
_STRINGY = ("STR", "TEXT", "JSON", "INPUT", "EXPR", "PATTERN", "MSG", "MESSAGE", "QUERY", "DATA")


@dataclass
class Corpus:
    """What the explorer draws on: sample files and example invocations."""

    files: dict[str, str] = field(default_factory=dict)  # relative path -> text
    examples: list[Example] = field(default_factory=list)  # from the docs and usage text
    option_values: dict[str, list[str]] = field(default_factory=dict)
    numbers: list[str] = field(default_factory=list)  # drawn with hypothesis
    texts: list[str] = field(default_factory=list)  # drawn with hypothesis
    blobs: list[bytes] = field(default_factory=list)  # binary stdin, drawn with hypothesis
    data_names: list[str] = field(default_factory=list)  # installed data files (fonts), by stem
    data_files: dict[str, str | bytes] = field(default_factory=dict)  # their copies, zipped, cut
    data_dirs: list[str] = field(default_factory=list)  # where they are installed (absolute)
    outputs: list[str] = field(default_factory=list)  # what the program wrote, to read back
    # files the docs show whole under a name no argument gives (docfiles): a config the
    # program looks for in the directory it runs in
    shown: dict[str, str] = field(default_factory=dict)

    def add_output(self, probe: Probe, out: Outcome, limit: int = 24, max_chars: int = 16_384) -> None:
        """The program's own output as a later input (its own format, as a converter or a
        formatter reads it back): stdout of a probe that reached new lines, when it is new."""
        text = out.stdout
        if out.exit_code != 0 or not text or len(text) > max_chars or len(self.outputs) >= limit:
            return
        if text != probe.stdin and text not in self.outputs:
            self.outputs.append(text)

    def data_values(self) -> list[str]:
        """Names a data-file option may take: the copies as named, the installed stems, then
        the copies by stem (a program that adds its own suffix). Copies first: each is a form
        of the data no installed file has, and a cap on the list keeps them."""
        copies = sorted(self.data_files)
        stems = [name.rsplit(".", 1)[0] for name in copies]
        return list(dict.fromkeys(copies + self.data_names + stems))

    def input_files(self, args: tuple[str, ...]) -> tuple[tuple[str, str | bytes], ...]:
        """The input files `args` name: samples, and data copies by name or by stem."""
        found: dict[str, str | bytes] = {}
        for arg in args:
            if arg in self.files:
                found[arg] = self.files[arg]
            for name, content in self.data_files.items():
                if arg in (name, name.rsplit(".", 1)[0]):
                    found[name] = content
        return tuple(found.items())


def sample_files(
    repo: Path, limit: int = 12, max_bytes: int = 16_384, samples: bool = True
) -> dict[str, str]:
    """Small text files of the sample and test directories, then the top directory's documents
    (`samples` false: the documents alone, which the cleanroom ships too)."""
    subs = _SAMPLE_DIRS if samples else ()
    dirs = [sorted((repo / sub).rglob("*")) for sub in subs if (repo / sub).is_dir()]
    docs = sorted({p for pattern in _TOP_DOCS for p in repo.glob(pattern)})
    found: dict[str, str] = {}
    for path in [p for paths in dirs for p in paths] + docs:
        if len(found) >= limit:
            break
        if path.is_file() and path.suffix in _TEXT_SUFFIXES and path.stat().st_size <= max_bytes:
            try:
                found.setdefault(path.relative_to(repo).as_posix(), path.read_text())
            except UnicodeDecodeError:
                continue
    return found


def readme_examples(
    repo: Path, names: set[str], usage: list[str] | None = None, pages: list[str] | None = None
) -> list[Example]:
    """Invocations of the program (by any of `names`) in the README and the docs' markdown
    pages, the shell lines of its man pages (roff `pages`) and its usage text."""
    texts = [d.read_text(errors="replace") for d in doc_pages(repo)]
    shown = ["\n".join(f"    {line}" for line in manpage.literal_lines(page)) for page in pages or []]
    return doc_examples(texts + shown + list(usage or []), names)


def build_corpus(
    repo: Path, names: set[str], seed: int = 0, usage: list[str] | None = None, samples: bool = True
) -> Corpus:
    """The explorer's inputs; `samples` false: only what the cleanroom shows a worker (no
    sample or test files of the repository), as an attacker would have them."""
    # hypothesis is imported here, not at the top: the config (and so every command) reaches this module
    from taskfoundry.kinds.program.testgen.strategies import BYTES, DOCUMENTS, NUMBERS, TEXT, draw, table_text

    pages = [page.read_text(errors="replace") for page in manpage.man_pages(repo)]
    corpus = Corpus(sample_files(repo, samples=samples), readme_examples(repo, names, usage, pages))
    corpus.shown = documented_files(repo)
    for suffix in named_formats(names, usage or [], {Path(n).suffix for n in corpus.files}):
        docs = draw(DOCUMENTS[suffix], FORMAT_SAMPLES, seed)
        corpus.files |= {f"gen/{i}{suffix}": doc for i, doc in enumerate(docs)}
    corpus.numbers = draw(NUMBERS, 24, seed)
    width = len(_header_words(corpus)) or 3
    corpus.texts = draw(TEXT, 16, seed) + draw(table_text(width), 16, seed)
    corpus.blobs = draw(BYTES, 8, seed)
    inline = _INLINE_VALUE.findall("\n".join(usage or []))
    for flag, value in inline + [pair for page in pages for pair in manpage.option_values(page)]:
        corpus.option_values.setdefault(flag, []).append(value.rstrip(".,;:)'\"`"))
    for example in corpus.examples:
        argv = example.argv
        for i, arg in enumerate(argv[:-1]):
            if arg.startswith("-") and not argv[i + 1].startswith("-"):
                corpus.option_values.setdefault(arg, []).append(argv[i + 1])
    return corpus


def named_formats(names: set[str], usage: list[str], shipped: set[str]) -> list[str]:
    """Suffixes of the formats a program's name or usage line names (xml-analyze, `tox-ini-fmt
    [-h] tox_ini`) that no sample file has: xml-rs ships no XML, and its explorer fed it none."""
    heads = [text.strip().splitlines()[0] for text in usage if text.strip()]
    words = {w.lower() for text in [*names, *heads] for w in re.split(r"[^A-Za-z0-9]+", text)}
    suffixes = (f".{w}" for w in sorted(words))
    return [s for s in suffixes if s in _FORMAT_SUFFIXES and s not in shipped]


def values_for(opt: Option, corpus: Corpus, rng: random.Random) -> list[str]:
    """Candidate values for an option, from its choices, the docs and its metavar."""
    values: list[str] = list(opt.choices)
    for flag in opt.flags:
        values += corpus.option_values.get(flag, [])
    meta = (opt.metavar or "").upper()
    if meta == "N" or any(k in meta for k in _NUMERIC):
        values += ["0", "1", "2", "3", "5", "10", "80", "-1", "x"]
        values += rng.sample(corpus.numbers, k=min(2, len(corpus.numbers)))
    if "CHAR" in meta or "DELIM" in meta or "SEP" in meta:
        values += [";", "\t", "|", "ab"]
    if (corpus.data_names or corpus.data_files) and named_data(opt):
        named = corpus.data_values()
        values += (corpus.data_names or named)[:2] + rng.sample(named, k=min(3, len(named)))
    if any(k in meta for k in _STRINGY):
        contents = sorted(corpus.files.values(), key=len)
        values += [c.strip() for c in contents[:3] if 0 < len(c) <= 2048] + corpus.texts[:2]
    if "DIR" in meta:  # a directory to look for data in: where the install put it, here, none
        values += corpus.data_dirs[:2] + [".", "missing-dir"]
    if "FILE" in meta or "PATH" in meta:
        values += ["out.txt"] + sorted(corpus.files)[:2] + ["missing.txt"]
    if any(k in meta for k in ("COL", "KEY", "FIELD", "NAME", "LIST")):
        values += _header_words(corpus)[:4] + ["1", "2", "nosuch"]
    if not values:
        values += ["1", "a", ""]
    values.append(rng.choice(["0", "zz", "-", "9999999999999999999999"]))
    return list(dict.fromkeys(values))


def named_data(opt: Option) -> bool:
    """Whether the option's value may name a data file (FONTFILE, STYLE, CONTROLFILE)."""
    return any(k in (opt.metavar or "").upper() for k in _NAMED_DATA)


def _header_words(corpus: Corpus) -> list[str]:
    for text in corpus.files.values():
        first = text.splitlines()[0] if text.strip() else ""
        if "," in first:
            return [w.strip().strip('"') for w in first.split(",") if w.strip()]
    return []


def mutate_text(text: str, rng: random.Random) -> str:
    """A damaged or reshaped variant of a sample input, to reach error paths."""
    lines = text.splitlines(keepends=True)
    choice = rng.randrange(7)
    if choice == 0 and lines:
        return "".join(lines[: max(1, len(lines) // 2)])
    if choice == 1:
        return text.replace("\n", "\r\n")
    if choice == 2 and lines:
        i = rng.randrange(len(lines))
        return "".join(lines[:i] + ['"unterminated,' + lines[i]] + lines[i + 1 :])
    if choice == 3:
        return ""
    if choice == 4 and lines:
        return "".join(lines[:1])
    if choice == 5:
        return text.rstrip("\n")
    return text + "".join(rng.sample(lines, k=min(2, len(lines))))
