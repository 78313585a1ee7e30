"""Hypothesis strategies for probe inputs, drawn reproducibly from a seed."""

from __future__ import annotations

import json
from html import escape  # XML's five entities; `'` as &#x27;
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

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


_TAGS = st.sampled_from(["a", "b", "item", "row", "name", "ns:x", "data", "Entry"])
_WORD = st.text(alphabet=st.sampled_from("abcxyz 019<&>\"'-_é"), max_size=10)
_KEY = st.text(alphabet="abcdxyz_-.", min_size=1, max_size=8)


def _render(tag: str, attrs: dict[str, str], children: list[str]) -> str:
    opened = tag + "".join(f' {k}="{escape(v)}"' for k, v in attrs.items())
    return f"<{opened}>{''.join(children)}</{tag}>" if children else f"<{opened}/>"


def _element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    attrs = st.dictionaries(st.sampled_from(["id", "type", "ns:n", "n"]), _WORD, max_size=2)
    return st.builds(_render, _TAGS, attrs, st.lists(children, max_size=3))


_XML_LEAF = st.one_of(
    _WORD.map(escape), st.just("<!-- note -->"), _WORD.map(lambda w: f"<![CDATA[{w}]]>"), st.just("\n  ")
)
XML = st.tuples(
    st.sampled_from(["", '<?xml version="1.0" encoding="UTF-8"?>\n', "<?xml version='1.0'?>"]),
    st.sampled_from(["doc", "root", "items"]),
    st.lists(st.recursive(_XML_LEAF, _element, max_leaves=10), max_size=4),
).map(lambda t: f'{t[0]}<{t[1]} xmlns:ns="urn:tf">{"".join(t[2])}</{t[1]}>\n')
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False) | _WORD,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_KEY, c, max_size=3),
    max_leaves=10,
)
JSON = st.tuples(_JSON_VALUES, st.sampled_from([None, 2, 4])).map(
    lambda t: json.dumps(t[0], indent=t[1]) + "\n"
)
_INI_VALUE = st.one_of(
    _WORD, st.lists(_KEY, min_size=1, max_size=3).map(lambda v: "\n    " + "\n    ".join(v))
)
INI = st.lists(
    st.tuples(
        st.sampled_from(["tox", "testenv", "testenv:lint", "section", "DEFAULT", "flake8"]),
        st.lists(st.tuples(_KEY, _INI_VALUE, st.sampled_from([" = ", "=", ": "])), max_size=4),
    ),
    min_size=1,
    max_size=4,
).map(lambda secs: "".join(f"[{n}]\n" + "".join(f"{k}{sep}{v}\n" for k, v, sep in kv) for n, kv in secs))
#: documents of a format by its file suffix: a program named for a format (xml-analyze,
#: tox-ini-fmt) whose tree ships no file of it gets these to read
DOCUMENTS: dict[str, st.SearchStrategy[str]] = {".xml": XML, ".json": JSON, ".ini": INI}


#: hypothesis keeps caches (its unicode tables, the constants it reads out of local code) under
#: `.hypothesis/` in the current directory: a build would leave one wherever it was started
STORAGE = Path.home() / ".cache" / "taskfoundry" / "hypothesis"


def draw(strategy: st.SearchStrategy[Any], count: int, seed: int) -> list[Any]:
    """`count` examples of `strategy`; the same seed always gives the same list."""
    drawn: list[Any] = []
    set_hypothesis_home_dir(STORAGE)

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
