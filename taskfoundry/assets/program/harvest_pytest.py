"""pytest plugin: records a Python project's in-process calls of its own program.

Most Python command-line projects test the program by calling its entry point inside
pytest (`main(["--check", str(path)])`, click's `CliRunner().invoke(cli, args)`), so the
recording shim on PATH sees none of them. Loaded with `-p tf_pyharvest`, this wraps the
console script's entry point (`TF_HARVEST_ENTRY`, "module:function") before the tests are
collected: each call with an argument list (or, with none, a `sys.argv` a test set) is
logged by the shim's own `record` (argv, stdin, the files the arguments name, as read
before the call), then the call goes on unchanged. Standard library only; a recording
failure never fails the project's test.
"""

import functools
import importlib
import importlib.util
import inspect
import io
import json
import os
import sys
from importlib.machinery import SourceFileLoader

SHIM = os.environ.get("TF_HARVEST_SHIM", "/tf-harvest/shim")
CONFIG = os.environ.get("TF_HARVEST_CONFIG", "/tf-harvest/config.json")


def _shim():
    loader = SourceFileLoader("tf_harvest_shim", SHIM)
    spec = importlib.util.spec_from_loader("tf_harvest_shim", loader)
    if spec is None:
        raise ImportError(f"cannot load the shim at {SHIM}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def call_argv(args, kwargs):
    """The argument list of a call, or None: not one (a single string, a non-sequence), or
    none given while `sys.argv` is pytest's own."""
    given = kwargs.get("args", kwargs.get("argv", args[0] if args else None))
    if given is None:
        if "pytest" in os.path.basename(sys.argv[0]) or sys.argv[1:2] == ["-m"]:
            return None
        return [str(a) for a in sys.argv[1:]]
    if isinstance(given, (str, bytes)):
        return None
    try:
        return [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in given]
    except TypeError:
        return None


def current_stdin():
    """What a test put on stdin: an in-memory stream's contents, else nothing."""
    stream = sys.stdin
    if isinstance(stream, io.StringIO):
        return stream.getvalue().encode()
    buffer = getattr(stream, "buffer", None)
    return buffer.getvalue() if isinstance(buffer, io.BytesIO) else b""


def recording(func, shim, config):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            argv = call_argv(args, kwargs)
            if argv is not None:
                shim.record(config, argv, current_stdin(), True)
        except Exception as exc:  # noqa: BLE001 - the project's test goes on
            sys.stderr.write(f"taskfoundry harvest: not recorded: {exc!r}\n")
        return func(*args, **kwargs)

    return wrapper


def wrap_entry(entry, shim, config):
    """Replace the entry point by a recording wrapper; a click command's `main` is wrapped
    instead (CliRunner calls `cli.main(args=...)`). Returns what was wrapped, or None."""
    module_name, _, attr = entry.partition(":")
    owner = importlib.import_module(module_name)
    *path, name = attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    target = getattr(owner, name)
    if inspect.isfunction(target):
        setattr(owner, name, recording(target, shim, config))
        return f"{module_name}:{attr}"
    if callable(getattr(target, "main", None)):
        target.main = recording(target.main, shim, config)
        return f"{module_name}:{attr}.main"
    return None


def pytest_configure(config):
    entry = os.environ.get("TF_HARVEST_ENTRY", "")
    if not entry:
        return
    try:
        with open(CONFIG) as handle:
            settings = json.load(handle)
        wrap_entry(entry, _shim(), settings)
    except Exception as exc:  # noqa: BLE001 - no recording, the project's tests as they are
        sys.stderr.write(f"taskfoundry harvest: {entry} not wrapped: {exc!r}\n")
