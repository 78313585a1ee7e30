"""Plain-text tables with aligned columns."""

from __future__ import annotations

from collections.abc import Sequence


def _cell(value: object) -> str:
    """A cell's text: floats with two decimals, None as empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _widths(rows: Sequence[Sequence[str]]) -> list[int]:
    """The width of each column: its longest cell."""
    ncols = max(len(r) for r in rows)
    return [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(ncols)]


def _align(text: str, width: int, numeric: bool) -> str:
    """Numbers right-aligned, anything else left-aligned."""
    return text.rjust(width) if numeric else text.ljust(width)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def render(header: Sequence[str], rows: Sequence[Sequence[object]], sep: str = " | ") -> str:
    """The table as text: the header, a rule of dashes, then the rows; columns aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = _widths([list(header), *cells])
    lines = [sep.join(_align(h, w, False) for h, w in zip(header, widths, strict=False)).rstrip()]
    lines.append(sep.join("-" * w for w in widths).rstrip())
    for raw, row in zip(rows, cells, strict=True):
        padded = [
            _align(row[i] if i < len(row) else "", w, i < len(raw) and _is_number(raw[i]))
            for i, w in enumerate(widths)
        ]
        lines.append(sep.join(padded).rstrip())
    return "\n".join(lines)


def column_totals(rows: Sequence[Sequence[object]]) -> list[float | None]:
    """The sum of each column's numbers (None for a column without any)."""
    ncols = max((len(r) for r in rows), default=0)
    totals: list[float | None] = []
    for i in range(ncols):
        nums = [float(r[i]) for r in rows if i < len(r) and _is_number(r[i])]  # type: ignore[arg-type]
        totals.append(sum(nums) if nums else None)
    return totals
