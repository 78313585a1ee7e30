"""What the ELF headers of an executable say about how it is linked (its code pages:
`harness.goldcode`)."""

from __future__ import annotations

import io

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from taskfoundry.kinds.program.cleanroom.reports import Linkage


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
