"""A dump-made executable, as a worker who copied the gold's loaded segments out would write it:
the loadable segments' pages laid out anew in a file of their own (no section headers, no gaps,
a new size and hash), with the program headers moved to match. 64-bit little-endian ELF only.
"""

from __future__ import annotations

import struct

PAGE = 4096
_PHDR = struct.Struct("<IIQQQQQQ")  # type, flags, offset, vaddr, paddr, filesz, memsz, align
PT_LOAD = 1


def rewrap(gold: bytes) -> bytes:
    """The gold's PT_LOAD pages, packed: each segment's first page follows the previous
    segment's last (page phase kept, as mmap needs), other headers shifted with theirs."""
    phoff, phentsize, phnum = struct.unpack_from("<Q", gold, 0x20)[0], *struct.unpack_from("<HH", gold, 0x36)
    headers = [list(_PHDR.unpack_from(gold, phoff + i * phentsize)) for i in range(phnum)]
    loads = sorted((h for h in headers if h[0] == PT_LOAD), key=lambda h: h[2])
    out, moves = bytearray(), []  # (old start, old end, delta)
    for load in loads:
        start = load[2] - load[2] % PAGE
        end = load[2] + load[5]
        placed = len(out) + (-len(out)) % PAGE
        out.extend(b"\0" * (placed - len(out)))
        out.extend(gold[start:end])
        moves.append((start, end, placed - start))
    for header in headers:
        delta = next(
            (d for s, e, d in moves if s <= header[2] < e or (s <= header[2] <= e and header[5] == 0)), 0
        )
        header[2] += delta
    first_delta = moves[0][2]
    new_phoff = phoff + first_delta
    for i, header in enumerate(headers):
        _PHDR.pack_into(out, new_phoff + i * phentsize, *header)
    struct.pack_into("<Q", out, 0x20, new_phoff)
    struct.pack_into("<Q", out, 0x28, 0)  # no section headers
    struct.pack_into("<HHH", out, 0x3A, 0, 0, 0)  # shentsize, shnum, shstrndx
    return bytes(out)
