"""Inputs inferred from the program's runtime data: the files its install put under share/.

A program that reads data files (figlet's fonts and control files, a dictionary, a theme)
takes their names as option values, and reads them in every form it supports. So the
explorer gets: their names, spread over their families (suffixes) so that a small sample
holds a font and a control file alike; and, for the smallest and the largest file of each
family, copies in the forms a reader of it may meet: zipped (each kind of deflate block, and
cut short) and gzipped (figlet reads zipped fonts), cut short (the parser's error paths), with
letters of two, three and four UTF-8 bytes, and with bytes that are not UTF-8 (a decoder's
every branch). The copies are input files of the probes that name them, so a test carries
its own input.
"""

from __future__ import annotations

import gzip
import re
import struct
import zipfile
import zlib
from collections import Counter, defaultdict
from pathlib import PurePosixPath

from taskfoundry.layout import MANUAL_DIRS, RUNTIME_TAR
from taskfoundry.sandbox.base import Sandbox

MAX_DATA_BYTES = 64 * 1024  # a copy bigger than this would bloat every test that carries it
# a file this big is still taken for its compressed copies (they stay under the cap): more than
# an inflater's 32 KiB window and its 8 KiB input buffers is where their refills and flushes run
MAX_PACKED_SOURCE = 4 * MAX_DATA_BYTES


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
    (one member, under the file's own suffix: a reader that sniffs the format finds it) with
    each kind of deflate block (dynamic and fixed Huffman tables, stored blocks) and stored,
    the deflated zip cut in half, gzipped (`.gz` added); and for text, cut to its first
    quarter, with wide letters, and with bytes that are not UTF-8. Of a file over
    MAX_DATA_BYTES, only the compressed copies that stay under it."""
    path = PurePosixPath(name)
    suffix = "".join(path.suffixes)
    base = name[: len(name) - len(suffix)] if suffix else name
    deflated = _zip(name, data, zipfile.ZIP_DEFLATED)
    out: dict[str, str | bytes] = {
        f"{base}-zip{suffix}": deflated,
        f"{base}-zipfixed{suffix}": _zip(name, data, zipfile.ZIP_DEFLATED, strategy=zlib.Z_FIXED),
        f"{base}-zip0{suffix}": _zip(name, data, zipfile.ZIP_DEFLATED, level=0),
        f"{base}-zipcut{suffix}": deflated[: max(31 + len(name), len(deflated) // 2)],
        f"{base}-stored{suffix}": _zip(name, data, zipfile.ZIP_STORED),
        f"{name}.gz": gzip.compress(data, mtime=0),
    }
    if len(data) > MAX_DATA_BYTES:
        return {k: v for k, v in out.items() if len(v) <= MAX_DATA_BYTES}
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return out
    lines = text.splitlines(keepends=True)
    if len(lines) > 3:
        out[f"{base}-cut{suffix}"] = "".join(lines[: max(2, len(lines) // 4)])
        out[f"{base}-wide{suffix}"] = wide(lines)
        out[f"{base}-badutf8{suffix}"] = not_utf8(lines)
    return out


WIDE = ("é", "€", "𝄞")  # two, three and four bytes in UTF-8
NOT_UTF8 = (  # a stray byte, a cut sequence, an overlong form, a surrogate, five- and six-byte
    # forms, a lone continuation byte, a noncharacter (U+FFFE)
    b"\xff", b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80",
    b"\xfc\x84\x80\x80\x80\x80", b"\x80", b"\xef\xbf\xbe",
)  # fmt: skip


def wide(lines: list[str]) -> str:
    """The text with its most common ASCII symbol (a font's end mark, a table's separator)
    replaced, line by line in turn, by a letter of two, three and four UTF-8 bytes; the
    first line (a header naming its own marks) kept."""
    symbols = Counter(c for line in lines[1:] for c in re.findall(r"[!-/:-@\[-`{-~]", line))
    if not symbols:
        return "".join(lines[:1] + [WIDE[i % 3] + line for i, line in enumerate(lines[1:])])
    mark = symbols.most_common(1)[0][0]
    return "".join(lines[:1] + [line.replace(mark, WIDE[i % 3]) for i, line in enumerate(lines[1:])])


def not_utf8(lines: list[str]) -> bytes:
    """The text with a byte sequence a strict UTF-8 reader refuses (NOT_UTF8) at the start of
    each line after the first, in turn."""
    body = [NOT_UTF8[i % len(NOT_UTF8)] + line.encode() for i, line in enumerate(lines[1:])]
    return b"".join([lines[0].encode(), *body])


def _zip(name: str, data: bytes, method: int, level: int = 6, strategy: int = 0) -> bytes:
    """A zip of one member, written here because zipfile cannot choose zlib's strategy
    (Z_FIXED makes fixed-Huffman blocks; 0 is the default); a fixed date, so the same data
    makes the same bytes."""
    body = data
    if method == zipfile.ZIP_DEFLATED:
        packer = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy)
        body = packer.compress(data) + packer.flush()
    raw, crc, date = name.encode(), zlib.crc32(data), (1 << 5) | 1  # 1980-01-01 00:00
    sizes = (crc, len(body), len(data), len(raw))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, date, *sizes, 0) + raw
    head = (0x02014B50, 20, 20, 0, method, 0, date)
    central = struct.pack("<IHHHHHHIIIHHHHHII", *head, *sizes, 0, 0, 0, 0, 0, 0) + raw
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(body), 0)
    return local + body + central + end


def data_inputs(sandbox: Sandbox, paths: list[str]) -> dict[str, str | bytes]:
    """`variants` of the smallest and the largest data file of each family (the largest up to
    MAX_PACKED_SOURCE: a larger file gives a deflater more than one kind of block, and an
    inflater's window more than one fill), read from the runtime-data tar."""
    if not paths:
        return {}
    res = sandbox.exec(["tar", "-tvf", RUNTIME_TAR], timeout=60)
    sizes = _sizes(res.stdout.decode(errors="replace")) if res.ok else {}
    chosen: dict[tuple[str, bool], str] = {}
    for path in sorted(paths, key=lambda p: (sizes.get(p, MAX_PACKED_SOURCE + 1), p)):
        if 0 < sizes.get(path, 0) <= MAX_PACKED_SOURCE:
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
