"""Inputs inferred from the program's runtime data: the files its install put under share/.

A program that reads data files (figlet's fonts and control files, a dictionary, a theme)
takes their names as option values, and reads them in every form it supports. So the
explorer gets: their names, spread over their families (suffixes) so that a small sample
holds a font and a control file alike; and, for the smallest file of each family, copies
in the forms a reader of it may meet: zip- and gzip-compressed (figlet reads zipped fonts),
cut short (the parser's error paths). The copies are input files of the probes that name
them, so a test carries its own input.
"""

from __future__ import annotations

import gzip
import io
import zipfile
from collections import defaultdict
from pathlib import PurePosixPath

from taskfoundry.layout import MANUAL_DIRS, RUNTIME_TAR
from taskfoundry.sandbox.base import Sandbox

MAX_DATA_BYTES = 64 * 1024  # a copy bigger than this would bloat every test that carries it
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed, so the same data makes the same bytes


def installed_data(sandbox: Sandbox) -> list[str]:
    """Members of the build's runtime-data tar that are data (docs and translations left out)."""
    res = sandbox.exec(["tar", "-tf", RUNTIME_TAR], timeout=60)
    if not res.ok:
        return []  # nothing staged
    found = []
    for line in res.stdout.decode(errors="replace").splitlines():
        parts = line.rstrip("/").split("/")
        if line.endswith("/") or (MANUAL_DIRS | {"locale"}) & set(parts):
            continue
        found.append(line)
    return sorted(found)


def data_dirs(paths: list[str]) -> list[str]:
    """The directories holding the data files, most files first (absolute: the tar's members
    are relative to /, and the cleanroom unpacks them there too)."""
    counts: dict[str, int] = defaultdict(int)
    for path in paths:
        counts["/" + str(PurePosixPath(path).parent).lstrip("/")] += 1
    return sorted(counts, key=lambda d: (-counts[d], d))


def family(path: str) -> str:
    """A data file's kind, by its suffixes: `.flf`, `.flc`, `.tar.gz`."""
    return "".join(PurePosixPath(path).suffixes)


def stem(path: str) -> str:
    return PurePosixPath(path).name.split(".")[0]


def data_names(paths: list[str]) -> list[str]:
    """Stems of the data files, families interleaved: the first few names hold one of each
    family (a font and a control file), whatever their counts."""
    by_family: dict[str, list[str]] = defaultdict(list)
    for path in sorted(paths):
        by_family[family(path)].append(stem(path))
    columns = [sorted(set(names)) for _, names in sorted(by_family.items())]
    out: list[str] = []
    for i in range(max((len(c) for c in columns), default=0)):
        out += [c[i] for c in columns if i < len(c)]
    return [n for n in dict.fromkeys(out) if n]


def variants(name: str, data: bytes) -> dict[str, str | bytes]:
    """Copies of one data file (its base name `name`) in the forms a reader meets: zipped
    (one member, under the file's own suffix: a reader that sniffs the format finds it),
    deflated and stored (an inflater's Huffman tables and its copy path), gzipped (`.gz`
    added), and cut to its first quarter (text only)."""
    path = PurePosixPath(name)
    suffix = "".join(path.suffixes)
    base = name[: len(name) - len(suffix)] if suffix else name
    out: dict[str, str | bytes] = {
        f"{base}-zip{suffix}": _zipped(name, data, zipfile.ZIP_DEFLATED),
        f"{base}-stored{suffix}": _zipped(name, data, zipfile.ZIP_STORED),
        f"{name}.gz": gzip.compress(data, mtime=0),
    }
    try:
        lines = data.decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        return out
    if len(lines) > 3:
        out[f"{base}-cut{suffix}"] = "".join(lines[: max(2, len(lines) // 4)])
    return out


def _zipped(name: str, data: bytes, how: int) -> bytes:
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", how) as archive:
        archive.writestr(zipfile.ZipInfo(name, _ZIP_TIME), data, compress_type=how)
    return packed.getvalue()


def data_inputs(sandbox: Sandbox, paths: list[str]) -> dict[str, str | bytes]:
    """`variants` of the smallest and the largest data file of each family (under the size cap;
    a larger file gives a deflater more than one kind of block), read from the runtime-data tar."""
    if not paths:
        return {}
    res = sandbox.exec(["tar", "-tvf", RUNTIME_TAR], timeout=60)
    sizes = _sizes(res.stdout.decode(errors="replace")) if res.ok else {}
    chosen: dict[tuple[str, bool], str] = {}
    for path in sorted(paths, key=lambda p: (sizes.get(p, MAX_DATA_BYTES + 1), p)):
        if 0 < sizes.get(path, 0) <= MAX_DATA_BYTES:
            chosen.setdefault((family(path), False), path)
            chosen[(family(path), True)] = path  # the largest last
    out: dict[str, str | bytes] = {}
    for path in dict.fromkeys(chosen.values()):
        got = sandbox.exec(["tar", "-xOf", RUNTIME_TAR, path], timeout=60)
        if got.ok and got.stdout:
            out.update(variants(PurePosixPath(path).name, got.stdout))
    return out


def _sizes(listing: str) -> dict[str, int]:
    """Member -> size from `tar -tv` (`-rw-r--r-- root/root 4096 2024-01-01 00:00 path`)."""
    sizes = {}
    for line in listing.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[2].isdigit():
            sizes[fields[5]] = int(fields[2])
    return sizes
