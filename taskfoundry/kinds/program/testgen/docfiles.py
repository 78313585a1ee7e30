"""Files a program reads from the directory it runs in, as its docs show them.

A program may look for its configuration in its working directory, under a name no argument
gives (appstream-generator's `asgen-config.json`): without it every call ends at "Unable to
load configuration", whatever the subcommand. Docs often show such a file whole, in a code
block right after the sentence that names it ("An example `asgen-config.json` file may look
like this:"). The explorer runs some probes with those files in place.

Such a file may name a directory of the author's machine (`"ArchiveRoot":
"/srv/archive.tanglu.org/tanglu/"`): every call then ends at "Directory ... does not exist".
The file is given with that directory relative, and the directory is made beside it (an empty
KEEP file in it), so the program gets past its check to its work.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import yaml

# a fenced block, with the text before it: the lead names the file
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
# a relative file name with a configuration format's suffix, not a part of a longer path
_SUFFIXES = "json|ya?ml|toml|ini|conf|cfg"
_NAME = re.compile(rf"(?<![\w/.~$-])((?:[\w.-]+/)*[\w.-]*\w\.({_SUFFIXES}))(?![\w/-]|\.\w)")
_SUFFIX = re.compile(rf"\.({_SUFFIXES})$", re.I)
LEAD_LINES = 3  # the non-empty lines before a block that may name it
MAX_FILES = 4
MAX_BYTES = 16_384
MAX_DOCS = 24  # markdown files read, in name order
_DOC_DIRS = ("docs", "doc", "Documentation")
# an absolute directory (it ends in "/") as a value: after a quote, a blank, "=" or ":"
_ABS_DIR = re.compile(r"(?<=[\"'\s=:])/((?:[\w.+-]+/)+)(?=[\"'\s,;]|$)", re.M)
# directories every image has: a config naming them means the machine's own
_SYSTEM_DIRS = (
    "usr/",
    "etc/",
    "bin/",
    "sbin/",
    "lib/",
    "lib64/",
    "proc/",
    "sys/",
    "dev/",
    "tmp/",
    "var/",
    "run/",
)
KEEP = ".keep"  # the file that makes a directory: probes carry files, not directories


def _parses_json(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict | list)
    except ValueError:
        return False


def _parses_yaml(text: str) -> bool:
    try:
        return isinstance(yaml.safe_load(text), dict)
    except yaml.YAMLError:
        return False


def _parses_toml(text: str) -> bool:
    try:
        return bool(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        return False


def _parses_ini(text: str) -> bool:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return False
    return bool(parser.sections())


# a block becomes the file only when it is the file's format: a shell session after a sentence
# that names the file is not the file (`.conf` and `.cfg` have no one format: any text goes)
_FORMATS: dict[str, Callable[[str], bool]] = {
    "json": _parses_json,
    "yaml": _parses_yaml,
    "yml": _parses_yaml,
    "toml": _parses_toml,
    "ini": _parses_ini,
    "conf": lambda text: bool(text.strip()),
    "cfg": lambda text: bool(text.strip()),
}


def doc_pages(repo: Path) -> list[Path]:
    """The README and the markdown pages of the docs directories, at most MAX_DOCS."""
    pages = sorted(p for p in repo.glob("README*") if p.is_file())
    for sub in _DOC_DIRS:
        if (repo / sub).is_dir():
            pages += sorted(p for p in (repo / sub).rglob("*.md") if p.is_file())
    return pages[:MAX_DOCS]


def shown_files(text: str) -> dict[str, str]:
    """Each file a page shows whole: a code block in the file's format, after a lead (the
    LEAD_LINES non-empty lines before it) naming the file; the nearest name counts."""
    found: dict[str, str] = {}
    for match in _FENCE.finditer(text):
        body = match.group(1)
        lead = [ln for ln in text[: match.start()].splitlines() if ln.strip()][-LEAD_LINES:]
        names = [m for ln in lead for m in _NAME.findall(ln)]
        if not names or len(body.encode()) > MAX_BYTES:
            continue
        name, suffix = names[-1]
        if _plain_path(name) and _FORMATS[suffix.lower()](body):
            found.setdefault(name, body)
    return found


def _plain_path(name: str) -> bool:
    """Not out of the directory, and no directory named like a file: ansible-lint's docs
    write `changelog.yaml/changelog.yml` for either of two names."""
    dirs = name.split("/")[:-1]
    return ".." not in dirs and not any(_SUFFIX.search(d) for d in dirs)


def rooted(name: str, body: str) -> dict[str, str]:
    """The file with each absolute directory it names made relative, and a KEEP file in each
    such directory. Relative to the working directory, where programs resolve a relative path
    (appstream-generator's `fs::exists`), wherever the file is."""
    dirs = sorted(
        {d for d in _ABS_DIR.findall(body) if not d.startswith(_SYSTEM_DIRS)}, key=len, reverse=True
    )
    for d in dirs:  # longest first: a directory inside another is its own path, not a rewrite's
        body = re.sub(rf"(?<=[\"'\s=:])/{re.escape(d)}", d, body)
    return {name: body} | {f"{d}{KEEP}": "" for d in dirs}


def documented_files(repo: Path) -> dict[str, str]:
    """The files the docs show whole (relative name -> text), at most MAX_FILES, first
    shown first, with the directories they name made (`rooted`)."""
    found: dict[str, str] = {}
    for page in doc_pages(repo):
        for name, body in shown_files(page.read_text(errors="replace")).items():
            found.setdefault(name, body)
    files: dict[str, str] = {}
    for name, body in list(found.items())[:MAX_FILES]:
        files |= rooted(name, body)
    return files
