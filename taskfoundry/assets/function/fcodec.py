"""JSON codec and comparison for function-task cases (stdlib only).

Runs in three places: the generation container (inputs and outputs of the reference), the
hidden suite (decoding the stored cases) and the candidate's call runner. Values JSON cannot
hold as they are (tuples, sets, bytes, non-finite floats, complex, dicts with non-string keys,
the items of a returned iterator) are tagged objects `{"$t": kind, "v": ...}`; a dict that
itself has a "$t" key is tagged too.
Floats compare with a tolerance of 1e-6 (relative or absolute); every other value exactly,
type included (True is not 1, a tuple is not a list).
"""

from __future__ import annotations

import math
from typing import Any

TOLERANCE = 1e-6
TAG = "$t"


MAX_ITEMS = 1000  # an iterator a function returns is compared item by item, up to this many


class Iterated(list):  # type: ignore[type-arg]
    """The items of an iterator a function returned (a generator, map, itertools object)."""


class Unencodable(TypeError):
    """A value the codec cannot represent (an object of a class of the function's own)."""


def encode(value: Any, depth: int = 0) -> Any:
    if depth > 100:
        raise Unencodable("value nested deeper than 100 levels")
    t = type(value)
    if value is None or t is bool or t is str or t is int:
        return value
    if t is float:
        if math.isfinite(value):
            return value
        return {TAG: "float", "v": repr(value)}
    if t is list:
        return [encode(v, depth + 1) for v in value]
    if t is tuple:
        return {TAG: "tuple", "v": [encode(v, depth + 1) for v in value]}
    if t is set or t is frozenset:
        items = sorted((encode(v, depth + 1) for v in value), key=_order)
        return {TAG: t.__name__, "v": items}
    if t is bytes or t is bytearray:
        return {TAG: t.__name__, "v": value.hex()}
    if t is complex:
        return {TAG: "complex", "v": [encode(value.real), encode(value.imag)]}
    if hasattr(value, "__next__") and hasattr(value, "__iter__"):
        items = []
        for item in value:
            if len(items) == MAX_ITEMS:
                raise Unencodable(f"an iterator of more than {MAX_ITEMS} items")
            items.append(encode(item, depth + 1))
        return {TAG: "iter", "v": items}
    if t is dict:
        if all(type(k) is str for k in value) and TAG not in value:
            return {k: encode(v, depth + 1) for k, v in value.items()}
        return {TAG: "dict", "v": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    raise Unencodable(f"cannot encode a {t.__module__}.{t.__qualname__}")


def _order(encoded: Any) -> str:
    import json

    return json.dumps(encoded, sort_keys=True)


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    kind = data.get(TAG)
    if kind is None:
        return {k: decode(v) for k, v in data.items()}
    v = data["v"]
    if kind == "float":
        return float(v)
    if kind == "tuple":
        return tuple(decode(x) for x in v)
    if kind == "iter":
        return Iterated(decode(x) for x in v)
    if kind == "set":
        return {decode(x) for x in v}
    if kind == "frozenset":
        return frozenset(decode(x) for x in v)
    if kind == "bytes":
        return bytes.fromhex(v)
    if kind == "bytearray":
        return bytearray.fromhex(v)
    if kind == "complex":
        return complex(decode(v[0]), decode(v[1]))
    if kind == "dict":
        return {decode(k): decode(x) for k, x in v}
    raise ValueError(f"unknown tag {kind!r}")


def same(expected: Any, actual: Any) -> bool:
    """Decoded values equal: floats within TOLERANCE (nan equals nan), the rest exactly."""
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, float):
        if math.isnan(expected):
            return math.isnan(actual)
        return math.isclose(expected, actual, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    if isinstance(expected, complex):
        return same(expected.real, actual.real) and same(expected.imag, actual.imag)
    if isinstance(expected, (list, tuple)):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, dict):
        return expected.keys() == actual.keys() and all(same(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, (set, frozenset)) and any(isinstance(x, float) for x in expected):
        return same(sorted(expected, key=repr), sorted(actual, key=repr))
    return bool(expected == actual)


def same_outcome(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    """Outcomes are {"return": encoded} or {"raises": exception class name}."""
    if "raises" in expected:
        return actual.get("raises") == expected["raises"]
    if "return" not in actual:
        return False
    return same(decode(expected["return"]), decode(actual["return"]))
