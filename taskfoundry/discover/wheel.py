"""A wheel's `*.dist-info/entry_points.txt`, read with HTTP range requests: the zip's central
directory sits at its end, so two or three small reads replace a download of megabytes."""

from __future__ import annotations

import configparser
import struct
import zlib

from taskfoundry.discover.http import Client
from taskfoundry.errors import SourceError

_TAIL = 64 * 1024


def _range(client: Client, url: str, start: int, end: int, size: int) -> bytes:
    """Bytes [start, end) of the file; a server that ignores Range sends it all, sliced here."""
    data = client.get(url, {"Range": f"bytes={start}-{end - 1}"})
    return data[start:end] if len(data) == size and end - start != size else data


def entry_points(client: Client, url: str, size: int) -> str | None:
    """The text of the wheel's entry_points.txt, or None if it has none."""
    start = max(0, size - _TAIL)
    tail = _range(client, url, start, size, size)
    eocd = tail.rfind(b"PK\x05\x06")
    if eocd < 0 or len(tail) < eocd + 22:
        raise SourceError(f"{url}: no zip directory in the last {_TAIL} bytes")
    cd_size, cd_offset = struct.unpack("<II", tail[eocd + 12 : eocd + 20])
    if cd_offset < start:
        tail, start = _range(client, url, cd_offset, size, size), cd_offset
    directory = tail[cd_offset - start : cd_offset - start + cd_size]
    pos = 0
    while directory[pos : pos + 4] == b"PK\x01\x02":
        (method,) = struct.unpack("<H", directory[pos + 10 : pos + 12])
        csize, _, nlen, elen, clen = struct.unpack("<IIHHH", directory[pos + 20 : pos + 34])
        (offset,) = struct.unpack("<I", directory[pos + 42 : pos + 46])
        name = directory[pos + 46 : pos + 46 + nlen].decode("utf-8", "replace")
        pos += 46 + nlen + elen + clen
        if name.count("/") == 1 and name.endswith(".dist-info/entry_points.txt"):
            return _member(client, url, size, offset, csize, method, tail, start)
    return None


def _member(
    client: Client, url: str, size: int, offset: int, csize: int, method: int, tail: bytes, start: int
) -> str:
    if offset >= start:
        local = tail[offset - start :]
    else:
        local = _range(client, url, offset, min(size, offset + 30 + 1024 + csize), size)
    nlen, elen = struct.unpack("<HH", local[26:30])
    raw = local[30 + nlen + elen : 30 + nlen + elen + csize]
    if len(raw) < csize:
        raise SourceError(f"{url}: entry_points.txt cut short")
    if method == 8:
        raw = zlib.decompressobj(-15).decompress(raw)
    elif method != 0:
        raise SourceError(f"{url}: entry_points.txt compressed with method {method}")
    return raw.decode("utf-8", "replace")


def console_scripts(text: str | None) -> list[str]:
    if not text:
        return []
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign] # script names keep their case
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise SourceError(f"entry_points.txt unreadable: {exc}") from exc
    return list(parser["console_scripts"]) if parser.has_section("console_scripts") else []
