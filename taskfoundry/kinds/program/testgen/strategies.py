"""Hypothesis strategies for probe inputs, drawn reproducibly from a seed."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

_PRINTABLE = st.characters(min_codepoint=32, max_codepoint=126)

NUMBERS = st.one_of(
    st.integers(min_value=-1000, max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda f: f"{f:.3g}"),
).map(str)
BYTES = st.binary(min_size=1, max_size=300)
WORDS = st.text(alphabet=_PRINTABLE, min_size=1, max_size=12)
TEXT = st.lists(st.text(alphabet=_PRINTABLE, max_size=40), max_size=8).map(
    lambda lines: "".join(line + "\n" for line in lines)
)


def table_text(columns: int) -> st.SearchStrategy[str]:
    """Delimited rows with a fixed column count, some cells numeric."""
    cell = st.one_of(NUMBERS, st.text(alphabet="abcxyz ", max_size=6))
    row = st.lists(cell, min_size=columns, max_size=columns).map(",".join)
    return st.lists(row, min_size=1, max_size=6).map(lambda rows: "\n".join(rows) + "\n")


def draw(strategy: st.SearchStrategy[Any], count: int, seed: int) -> list[Any]:
    """`count` examples of `strategy`; the same seed always gives the same list."""
    drawn: list[Any] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=count,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn[:count]
