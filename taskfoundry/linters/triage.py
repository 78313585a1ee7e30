"""The five-class triage: how could a solver without the source obtain an expected value?

Decided in this order, from the data-flow of the assertion's two sides:
recall (a digest of what a cipher, codec or compressor wrote), pinned (a digest of any
other output, a rendered image), recall (digests, base64, codec bytes, codec golden files),
contract (exit status), self-consistent (output vs the program's own output or the test's
input, possibly through a stdlib decoder), contract (counts, ranges, types, structure,
absence), observable (the rest: values read off one reference run).
"""

from __future__ import annotations

import libcst as cst

from taskfoundry.linters import origins as o
from taskfoundry.linters.cstutil import as_bytes, call_name, comparison, literal_value
from taskfoundry.linters.facts import Assertion, Case
from taskfoundry.linters.kinds import NEGATIVE, RETURNCODE, WEAK, Kind, is_collection, literal_of

Verdict = tuple[str, str]
Tags = frozenset[str]

_RECALL_REASONS = (
    (
        o.LIT_DIGEST,
        "program output compared with a hex digest literal: only the published "
        "hash algorithm produces it on this input",
    ),
    (
        o.LIT_B64,
        "program output compared with a long base64 literal: encoded bytes only the algorithm produces",
    ),
    (
        o.LIT_CODEC,
        "program output compared with compressed or encoded bytes: only the codec produces them",
    ),
    (
        o.GOLDEN_CODEC,
        "byte-exact comparison with a golden file a codec, compressor or cipher produced",
    ),
)
_OBSERVABLE_WEAK = ("substring", "prefix", "suffix", "pattern", "alternatives")


def _pinned(tags: Tags) -> Verdict | None:
    if o.HASH_PROGRAM in tags and o.CODEC_OUTPUT in tags and tags & {o.LITERAL, o.GOLDEN}:
        return "recall", (
            "a digest of output a cipher, codec or compressor produced is compared with a fixed "
            "value: only that algorithm, run on this input, gives it"
        )
    if o.HASH_PROGRAM in tags and tags & {o.LITERAL, o.GOLDEN}:
        return "pinned", (
            "a digest of the program's output is compared with a fixed value: it pins the "
            "reference's exact bytes; compare the (normalised) output instead"
        )
    if o.PROGRAM in tags and tags & {o.GOLDEN_RENDER, o.LIT_IMAGE}:
        return "pinned", (
            "byte-exact comparison with a rendered image or document: pins the reference "
            "renderer's exact output"
        )
    return None


def _recall(tags: Tags) -> Verdict | None:
    if o.PROGRAM not in tags:
        return None
    for tag, reason in _RECALL_REASONS:
        if tag in tags:
            return "recall", reason
    if o.HASH in tags:
        return "recall", (
            "program output compared with a digest the test computes: the program must "
            "reproduce a published algorithm bit for bit"
        )
    return None


def _sides(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    parts = comparison(expr)
    if parts is None or parts[1] not in ("Equal", "In", "NotEqual"):
        return None
    return parts[0], parts[2]


def _self_consistent(case: Case, expr: cst.BaseExpression) -> Verdict | None:
    sides = _sides(expr)
    if sides is None:
        return None
    left, right = (case.flow.origins(s) for s in sides)
    if o.PROGRAM in left and o.PROGRAM in right:
        return "self-consistent", "compares outputs of the program with each other"
    if o.PROGRAM not in left and o.PROGRAM not in right:
        return None
    observed, expected = (left, sides[1]) if o.PROGRAM in left else (right, sides[0])
    expected_tags = case.flow.origins(expected)
    if o.INPUT in expected_tags:
        return "self-consistent", "roundtrip: the program's output is compared with the input"
    value = literal_of(case.flow, expected)
    if o.DECODED in observed and value is not None:
        if as_bytes(value) in case.flow.run_input_literals:
            return "self-consistent", ("roundtrip: output decoded with the standard library equals the input")
    return None


def _contract(case: Case, expr: cst.BaseExpression, kind: Kind) -> Verdict | None:
    if kind.kind == NEGATIVE:
        return "contract", f"absence property ({kind.detail})"
    if kind.kind == WEAK and not any(w in kind.detail for w in _OBSERVABLE_WEAK):
        return "contract", f"property of the output ({kind.detail})"
    if kind.detail == "exact count":
        return "contract", "a count or size"
    parts = comparison(expr)
    if parts is not None and parts[1] == "In" and o.DECODED in case.flow.origins(parts[2]):
        if is_collection(case.flow, parts[2]):
            return "contract", "structure: a key or item of the parsed output"
    if isinstance(expr, cst.Call) and call_name(expr) == "isinstance":
        return "contract", "structure: type of a value"
    return None


def _observable(case: Case, expr: cst.BaseExpression, tags: Tags) -> Verdict:
    if o.PROGRAM not in tags:
        return "contract", "a property of test-local values (does not read the program)"
    if o.GOLDEN in tags:
        return "observable", "compared with a golden value taken from a reference run"
    sides = _sides(expr)
    if sides is not None and any(literal_value(s) in ("", b"") for s in sides):
        return "observable", "exactly empty, as one reference run shows"
    return "observable", "compared with a value read off one reference run"


def triage(case: Case, assertion: Assertion) -> Verdict:
    """(class, reason) for one assertion of a test."""
    expr = assertion.expr
    tags = case.flow.origins(expr)
    kind = case.kind(assertion)
    verdict = _pinned(tags) or _recall(tags)
    if verdict is None and kind.kind == RETURNCODE:
        verdict = "contract", "exit status"
    verdict = verdict or _self_consistent(case, expr) or _contract(case, expr, kind)
    return verdict or _observable(case, expr, tags)
