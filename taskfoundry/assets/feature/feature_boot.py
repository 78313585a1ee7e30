"""Start a feature task's pytest under the guard: root's part, then the worker's (stdlib only).

usage: python -I feature_boot.py CONFIG KEY_FD RECORD_FD UID GID -- PYTEST_ARGS...

Run as root by feature_guard_run.py with `-I` (no current directory or script directory on
sys.path, no PYTHON* variables, no user site). Before any code of the submission can run:

1. the search path is ordered trusted-first: the standard library and the environment's
   site directories before anything else (an editable install's path entries, the
   workspace last), so no workspace module shadows pytest, its plugins, the standard
   library or the grader;
2. the hidden F2P files are read as root (they are root's, 0600) and served to pytest's
   assertion rewriter from memory, by a generator that refuses when submitted code asks;
3. pytest and the guard are imported and the guard is armed with the HMAC key read from
   KEY_FD (then closed) and RECORD_FD, the pipe root reads;
4. the process drops to UID:GID (no supplementary groups), and pytest.main runs the tests.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Generator
from types import ModuleType
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE = "/workspace"


def load(name: str, path: str) -> ModuleType:
    """A module from a file, under `name` (the grader's code is never found by search)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def trusted_first(workspace: str) -> None:
    prefixes = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    entries = [p for p in sys.path if p]
    trusted = [p for p in entries if (os.path.realpath(p) + os.sep).startswith(prefixes)]
    sys.path[:] = trusted + [p for p in entries if p not in trusted] + [workspace]


def server(
    files: dict[str, bytes], on_stack: Callable[..., str | None]
) -> Generator[bytes | None, str, None]:
    """Yields a preloaded file's bytes for its path; nothing when submitted code is asking."""
    path = yield None
    while True:
        data = files.get(path)
        try:
            asked_by = on_stack(sys._getframe(0)) if data is not None else None
        except RuntimeError:
            asked_by = "refused"
        path = yield None if asked_by and asked_by != "sealed" else data


def serve_tests(files: dict[str, bytes], on_stack: Callable[..., str | None]) -> None:
    """pytest's assertion rewriter reads each test file itself: the protected ones come
    from memory (the worker cannot open them)."""
    from _pytest.assertion import rewrite

    original = rewrite._rewrite_test
    source = server(files, on_stack)
    next(source)

    def _rewrite_test(fn: Any, config: Any, _source: Any = source, _original: Any = original) -> Any:
        data = _source.send(str(fn))
        if data is None:
            return _original(fn, config)
        tree = ast.parse(data, filename=str(fn))
        rewrite.rewrite_asserts(tree, data, str(fn), config)
        return os.stat(fn), compile(tree, str(fn), "exec", dont_inherit=True)

    rewrite._rewrite_test = _rewrite_test


def drop(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("could not drop privileges")


def main(argv: list[str]) -> int:
    sep = argv.index("--")
    config_path, key_fd, record_fd, uid, gid = argv[:sep]
    args = argv[sep + 1 :]
    sys.dont_write_bytecode = True
    trusted_first(WORKSPACE)
    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    files = {}
    for path in config.get("protected", []):
        with open(path, "rb") as handle:
            files[path] = handle.read()
    with os.fdopen(int(key_fd), "rb") as handle:
        key = handle.read(32)
    import pytest

    types_module = load("tf_feature_types", os.path.join(HERE, "tf_feature_types.py"))
    guard = load("tf_feature_guard", os.path.join(HERE, "tf_feature_guard.py"))
    del sys.modules["tf_feature_guard"]  # found by no name; pytest gets the module itself
    serve_tests(files, guard._submitted_on_stack)  # before arming: part of the baseline
    guard.arm(key, int(record_fd), config, types_module)
    del key, files, config
    os.set_inheritable(int(record_fd), False)  # the tests' own subprocesses do not get it
    drop(int(uid), int(gid))
    os.chdir(WORKSPACE)
    return int(pytest.main(args, plugins=[guard]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
