"""What the ELF headers of an executable say: how it is linked, which bytes it runs as code."""

from __future__ import annotations

import io

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from taskfoundry.cleanroom.reports import Linkage

_PF_X = 0x1


def linkage(data: bytes) -> Linkage:
    """`dynamic` when the kernel hands the program to a loader (a PT_INTERP segment), `static`
    when it runs with none (static and static-pie), `script` for a #! file."""
    if data.startswith(b"#!"):
        return "script"
    try:
        elf = ELFFile(io.BytesIO(data))
        kinds = {segment["p_type"] for segment in elf.iter_segments()}
    except (ELFError, ValueError, KeyError):
        return "unknown"
    return "dynamic" if "PT_INTERP" in kinds else "static"


def code_segments(data: bytes) -> list[bytes]:
    """The file bytes of each loadable, executable segment (what the loader maps as code);
    [] for anything that is not an ELF file."""
    try:
        elf = ELFFile(io.BytesIO(data))
        return [
            data[s["p_offset"] : s["p_offset"] + s["p_filesz"]]
            for s in elf.iter_segments()
            if s["p_type"] == "PT_LOAD" and s["p_flags"] & _PF_X
        ]
    except (ELFError, ValueError, KeyError):
        return []
