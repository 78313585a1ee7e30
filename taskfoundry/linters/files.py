"""Files a test reads and writes: path identity, reads, writes, and where read data comes from."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from taskfoundry.linters import origins as o
from taskfoundry.linters.cstutil import (
    call_name,
    code,
    keyword,
    literal_value,
    method_name,
    positional,
)
from taskfoundry.linters.flowtypes import ValueFlow, Write

MAX_DEPTH = 8
PATH_WRAPPERS = frozenset({"str", "Path", "pathlib.Path", "os.fspath", "PurePath"})
READ_METHODS = frozenset({"read_text", "read_bytes"})
HANDLE_READS = frozenset({"read", "readlines", "readline"})
LOADERS = frozenset({"json.load", "pickle.load", "tomllib.load", "plistlib.load"})
OPENERS = frozenset({"open", "io.open", "gzip.open", "bz2.open", "lzma.open"})
PROBES = frozenset(
    {"os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.getsize", "os.path.lexists"}
)
PROBE_METHODS = frozenset({"exists", "is_file", "is_dir", "stat"})
COPIERS = frozenset({"shutil.copy", "shutil.copyfile", "shutil.copy2"})


def _mode(call: cst.Call, index: int) -> str:
    node = keyword(call, "mode") or positional(call, index)
    value = literal_value(node) if node is not None else None
    return value if isinstance(value, str) else "r"


def _writes(mode: str) -> bool:
    return any(c in mode for c in "wax")


@dataclass
class FileOps:
    """File reads and writes of one test function, on top of its Flow."""

    flow: ValueFlow
    writes: list[Write] = field(default_factory=list)
    input_files: set[str] = field(default_factory=set)
    _resolving: set[str] = field(default_factory=set)

    def path_key(self, node: cst.BaseExpression, depth: int = 0) -> str:
        """Normalised text of a path expression, through single bindings and str()/Path()."""
        if depth > MAX_DEPTH:
            return code(node)
        node = self.flow.single_value(node)
        while isinstance(node, cst.Call) and call_name(node) in PATH_WRAPPERS and node.args:
            node = self.flow.single_value(node.args[0].value)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            return f"{self.path_key(node.left, depth + 1)}/{code(node.right)}"
        return code(node)

    def _handle_path(self, node: cst.BaseExpression, writing: bool) -> cst.BaseExpression | None:
        node = self.flow.single_value(node)
        if not isinstance(node, cst.Call):
            return None
        if call_name(node) in OPENERS:
            path = positional(node, 0)
            return path if path is not None and _writes(_mode(node, 1)) == writing else None
        if method_name(node) == "open" and isinstance(node.func, cst.Attribute):
            return node.func.value if _writes(_mode(node, 0)) == writing else None
        return None

    def read_path(self, call: cst.Call) -> cst.BaseExpression | None:
        """The path a call reads the contents of (`p.read_text()`, `open(p).read()`, ...)."""
        method = method_name(call)
        if method in READ_METHODS and isinstance(call.func, cst.Attribute):
            return call.func.value
        if method in HANDLE_READS and isinstance(call.func, cst.Attribute):
            return self._handle_path(call.func.value, writing=False)
        if call_name(call) in LOADERS:
            handle = positional(call, 0)
            return self._handle_path(handle, writing=False) if handle is not None else None
        return None

    def probed_path(self, call: cst.Call) -> cst.BaseExpression | None:
        """The path an existence or size probe looks at (`p.exists()`, `os.path.isfile(p)`)."""
        name = call_name(call) or ""
        if name in PROBES:
            return positional(call, 0)
        if method_name(call) in PROBE_METHODS and isinstance(call.func, cst.Attribute):
            return call.func.value
        return None

    def note_call(self, call: cst.Call, line: int) -> None:
        """Record a write made by `call`, if it is one."""
        method = method_name(call)
        name = call_name(call)
        target: cst.BaseExpression | None = None
        value = positional(call, 0)
        source: cst.BaseExpression | None = None
        if method in ("write_text", "write_bytes") and isinstance(call.func, cst.Attribute):
            target = call.func.value
        elif method in ("write", "writelines") and isinstance(call.func, cst.Attribute):
            target = self._handle_path(call.func.value, writing=True)
        elif name == "json.dump" and positional(call, 1) is not None:
            target = self._handle_path(positional(call, 1), writing=True)  # type: ignore[arg-type]
        elif name in COPIERS:
            target, source, value = positional(call, 1), value, None
        if target is not None:
            self.writes.append(Write(self.path_key(target), line, value, source))

    def writes_to(self, key: str) -> list[Write]:
        """The writes the test makes to the file `key`."""
        return [w for w in self.writes if w.key == key]

    def is_input_file(self, key: str) -> bool:
        """Whether `key` names a file the test handed to the program via `files={...}`."""
        return any(key.endswith(f'"{name}"') for name in self.input_files)

    def path_origins(self, path: cst.BaseExpression) -> frozenset[str]:
        """Origins of the contents read from `path`."""
        key = self.path_key(path)
        writes = self.writes_to(key)
        if writes:
            return self._written_origins(key, writes)
        if self.is_input_file(key):
            return frozenset({o.INPUT})
        if o.is_golden_path(key):
            return frozenset({o.GOLDEN} | o.extension_tags(key))
        return frozenset({o.PROGRAM})

    def _written_origins(self, key: str, writes: list[Write]) -> frozenset[str]:
        if key in self._resolving:
            return frozenset({o.UNKNOWN})
        self._resolving.add(key)
        try:
            tags = {o.INPUT, o.TEST_WRITTEN}
            for write in writes:
                if write.value is not None:
                    written = self.flow.origins(write.value)
                elif write.source is not None:
                    written = self.path_origins(write.source)
                else:
                    written = frozenset({o.UNKNOWN})
                tags |= written
                if o.PROGRAM in written:
                    tags.add(o.WRITTEN_FROM_PROGRAM)
        finally:
            self._resolving.discard(key)
        if self.flow.runs_after(writes):
            tags.add(o.PROGRAM)
        return frozenset(tags)
