"""Compute the origin tags of an expression within a test (see `origins.py` for the tags)."""

from __future__ import annotations

from typing import Protocol

import libcst as cst

from taskfoundry.linters import origins as o
from taskfoundry.linters.cstutil import (
    LITERAL_NAMES,
    call_name,
    child_nodes,
    dotted_name,
    literal_value,
    method_name,
    positional,
)
from taskfoundry.linters.files import FileOps
from taskfoundry.linters.flowtypes import Tags, ValueFlow


class Flow(ValueFlow, Protocol):
    """What tagging reads of a test's data flow: values, and the files the test touches."""

    files: FileOps


_LITERAL: Tags = frozenset({o.LITERAL})
_UNKNOWN: Tags = frozenset({o.UNKNOWN})
DOC_CALLS = frozenset({"inspect.getdoc", "getdoc"})
ARCHIVE_OPENERS = frozenset(
    {"zipfile.ZipFile", "tarfile.open", "gzip.open", "bz2.open", "lzma.open", "gzip.GzipFile"}
)
HASH_CALLS = frozenset(
    {"zlib.crc32", "zlib.adler32", "binascii.crc32", "binascii.crc_hqx", "crc32", "adler32", "hash"}
)


def _union(flow: Flow, nodes: list[cst.BaseExpression]) -> Tags:
    tags: set[str] = set()
    for node in nodes:
        tags |= flow.origins(node)
    return frozenset(tags)


def _string(flow: Flow, node: cst.BaseExpression) -> Tags:
    if isinstance(node, cst.FormattedString):
        parts = [p.expression for p in node.parts if isinstance(p, cst.FormattedStringExpression)]
        return _LITERAL | _union(flow, parts)
    if isinstance(node, cst.ConcatenatedString) and literal_value(node) is None:
        return _LITERAL | _union(flow, [node.left, node.right])
    value = literal_value(node)
    if value is None:
        return _LITERAL
    return frozenset(o.literal_tags(value, flow.settings.golden_min))


def _is_hash(name: str | None) -> bool:
    return name is not None and (name.startswith("hashlib.") or name in HASH_CALLS)


def _root(name: str | None) -> str | None:
    return name.split(".")[0] if name else None


def _decodes(flow: Flow, call: cst.Call) -> bool:
    """A call into a roundtrip module, or a method on an object one returned (`z.read()`)."""
    if _root(call_name(call)) in flow.settings.roundtrip:
        return True
    if isinstance(call.func, cst.Attribute):
        receiver = flow.single_value(call.func.value)
        if isinstance(receiver, cst.Call):
            return _root(call_name(receiver)) in flow.settings.roundtrip
    return False


def _call(flow: Flow, call: cst.Call) -> Tags:
    name = call_name(call)
    if flow.is_run_call(call):
        return frozenset({o.PROGRAM})
    if name in DOC_CALLS and call.args and _own_function(flow, call.args[0].value):
        return frozenset({o.DOC})
    if method_name(call) == "shortDescription":
        return frozenset({o.DOC})
    args = _union(flow, [a.value for a in call.args])
    if _is_hash(name):
        extra = {o.HASH, o.HASH_PROGRAM} if o.PROGRAM in args else {o.HASH}
        return args | extra
    path = flow.files.read_path(call) or flow.files.probed_path(call)
    decoded = frozenset({o.DECODED}) if _decodes(flow, call) else frozenset()
    if path is not None:
        return flow.files.path_origins(path) | decoded
    if decoded:
        archive = positional(call, 0) if name in ARCHIVE_OPENERS else None
        if archive is not None and literal_value(archive) is None:
            return decoded | flow.files.path_origins(archive)
        if isinstance(call.func, cst.Attribute):
            return decoded | args | flow.origins(call.func.value)
        return decoded | args
    if isinstance(call.func, cst.Attribute):
        receiver = flow.origins(call.func.value)
        if method_name(call) in ("hexdigest", "digest") and o.PROGRAM in receiver:
            receiver = receiver | {o.HASH_PROGRAM}
        return receiver | args
    return args or _UNKNOWN


def _name(flow: Flow, node: cst.Name) -> Tags:
    if node.value in LITERAL_NAMES:
        return _LITERAL
    return flow.name_origins(node.value)


def _own_function(flow: Flow, node: cst.BaseExpression) -> bool:
    """`test_x`, `self.test_x`, `request.function`, `request.node.function` in test_x."""
    name = dotted_name(node) or ""
    own = flow.func.name.value
    return name in (own, f"self.{own}", f"cls.{own}") or name.endswith(".function")


def _attribute(flow: Flow, node: cst.Attribute) -> Tags:
    if node.attr.value == "__doc__" and _own_function(flow, node.value):
        return frozenset({o.DOC})
    if node.attr.value == "_testMethodDoc":
        return frozenset({o.DOC})
    inner = flow.origins(node.value)
    if node.attr.value in o.PROGRAM_ATTRS:
        return inner | {o.PROGRAM}
    return inner


def _children(flow: Flow, node: cst.CSTNode) -> Tags:
    children = child_nodes(node)
    parts = [c for c in children if isinstance(c, cst.BaseExpression)]
    for child in children:
        if isinstance(child, cst.BaseElement | cst.ComparisonTarget | cst.BaseDictElement):
            parts.extend(c for c in child_nodes(child) if isinstance(c, cst.BaseExpression))
        elif isinstance(child, cst.CompFor):
            parts.append(child.iter)
        elif isinstance(child, cst.Arg):
            parts.append(child.value)
    return _union(flow, parts) if parts else _LITERAL


def compute_origins(flow: Flow, node: cst.BaseExpression) -> Tags:
    """Origin tags of `node`, following names through the test's bindings."""
    if isinstance(node, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
        return _string(flow, node)
    if isinstance(node, cst.Integer | cst.Float | cst.Imaginary | cst.Ellipsis):
        return _LITERAL
    if isinstance(node, cst.Name):
        return _name(flow, node)
    if isinstance(node, cst.Attribute):
        return _attribute(flow, node)
    if isinstance(node, cst.Call):
        return _call(flow, node)
    if isinstance(node, cst.Subscript):
        return flow.origins(node.value)
    if isinstance(node, cst.GeneratorExp | cst.ListComp | cst.SetComp):
        return flow.origins(node.elt) | flow.origins(node.for_in.iter)
    if isinstance(node, cst.Lambda):
        return _UNKNOWN
    return _children(flow, node)
