"""The grader refuses the gold's code: a submitted executable that runs the gold's pages.

A worker who got the gold's loaded segments out (through its loader, ProgramBench#44) can
write them back as a runnable ELF, byte-identical, padded, re-linked, or copied into
another ELF's segments. Whatever the wrapping, what runs is the gold's code pages, at
virtual page boundaries (mmap maps whole pages at file offsets congruent to their
addresses). So: hash every full 4 KiB page of the gold's executable segments, hash every
full page of every loadable segment of the submitted executable, and refuse when most of
the gold's pages are there. A rebuild from scratch shares no page with the gold; a static
rebuild shares libc's code only if the same library members land at the same page phase in
the same order with the same relocations, which a different program does not do.

The task's own reference (solution.tar.gz, which rebuilds the gold, often byte for byte) is
recognised by its content (`submission_digest`), which a worker never sees. Not caught
here: a compressed or encrypted copy unpacked at run time; what stops that is a gold that
cannot be read in the first place (docs/evaluator.md, "Execute-only").
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Set as AbstractSet

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

PAGE = 4096
#: The share of the gold's code pages that makes a submission the gold's code.
THRESHOLD = 0.5
_PF_X = 0x1
#: A submission with more than this in its files is not hashed (it is not the reference).
DIGEST_CAP = 1 << 30


def loadable_segments(data: bytes, executable_only: bool = True) -> list[tuple[int, int, int]]:
    """(file offset, address, size in the file) of each loadable (executable) segment of an
    ELF file; [] for anything the parser cannot read as one."""
    try:
        return [
            (s["p_offset"], s["p_vaddr"], s["p_filesz"])
            for s in ELFFile(io.BytesIO(data)).iter_segments()
            if s["p_type"] == "PT_LOAD" and (s["p_flags"] & _PF_X or not executable_only)
        ]
    except (ELFError, ValueError, KeyError, IndexError, OverflowError, EOFError):
        return []


def code_pages(data: bytes, executable_only: bool = True) -> set[bytes]:
    """sha256 of each page the kernel maps for the (executable) loadable segments of an ELF:
    whole file pages at the segment's page-aligned offset, zero-filled past the file's end,
    which is also what a dump of the running program holds."""
    pages: set[bytes] = set()
    for offset, vaddr, size in loadable_segments(data, executable_only):
        first = offset - vaddr % PAGE
        for start in range(max(first, 0), min(offset + size, len(data)), PAGE):
            pages.add(hashlib.sha256(data[start : start + PAGE].ljust(PAGE, b"\0")).digest())
    return pages


def gold_code_share(candidate: bytes, gold_pages: AbstractSet[bytes]) -> float:
    """The share of the gold's code pages that `candidate` maps as loadable pages."""
    if not gold_pages:
        return 0.0
    return len(gold_pages & code_pages(candidate, executable_only=False)) / len(gold_pages)


def submission_digest(tarball: bytes) -> str:
    """sha256 over the regular files of a submission (name and content) and its links, in
    name order: the same files make the same digest, however the tar was packed. "" when the
    tar cannot be read or holds more than DIGEST_CAP bytes."""
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:*") as tar:
            members = sorted((m for m in tar.getmembers() if m.isfile() or m.issym()), key=_name)
            if sum(m.size for m in members) > DIGEST_CAP:
                return ""
            digest = hashlib.sha256()
            for member in members:
                digest.update(_name(member).encode() + b"\0")
                if member.issym():
                    digest.update(b"link\0" + member.linkname.encode() + b"\0")
                    continue
                handle = tar.extractfile(member)
                content = hashlib.sha256(handle.read() if handle else b"").hexdigest()
                digest.update(content.encode() + b"\0")
    except (tarfile.TarError, OSError, EOFError):
        return ""
    return digest.hexdigest()


def _name(member: tarfile.TarInfo) -> str:
    return member.name.removeprefix("./").strip("/")
