#!/usr/bin/python3
"""The recording shim: stands where the project's own tests look for the program.

Each call appends one JSON line (argv, stdin, the input files its arguments name, the
working directory's files when it holds few) to the log, then hands the call to the real
program with the same argv[0], arguments and stdin, and leaves with its exit status.
Standard library only: it runs in the build image, under whatever the test suite set up.
"""

import base64
import fcntl
import json
import os
import select
import signal
import stat
import subprocess
import sys
import time

CONFIG = os.environ.get("TF_HARVEST_CONFIG", "/tf-harvest/config.json")  # the variable: tests
STDIN_CAP = 1 << 20
FILE_CAP = 256 * 1024
CWD_FILES = 16  # a working directory with more entries is the tree's, not the test's
STDIN_WAIT = 10.0  # seconds for an open pipe to reach its end; longer: the call is not recorded


def b64(data):
    return base64.b64encode(data).decode()


def read_stdin():
    """(data, complete): stdin read to its end when it is a pipe or a file; a terminal or
    nothing: b"". A pipe still open after STDIN_WAIT, or over the cap: not complete."""
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return b"", True
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        return b"", True
    chunks: list[bytes] = []
    size, deadline = 0, time.monotonic() + STDIN_WAIT
    while size <= STDIN_CAP:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([0], [], [], left)[0]:
            return b"".join(chunks), False
        chunk = os.read(0, 65536)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def small_file(path):
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > FILE_CAP:
            return None
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def values(argv):
    """(index, prefix, value) of each argument, an `--opt=value`'s value after its prefix."""
    for i, arg in enumerate(argv):
        prefix, value = "", arg
        if arg.startswith("-") and "=" in arg:
            prefix, value = arg.split("=", 1)[0] + "=", arg.split("=", 1)[1]
        if value and not value.startswith("-"):
            yield i, prefix, value


def named_files(argv):
    """{argument index: [value prefix, path, base64]} for each argument that names a readable file."""
    found = {}
    for i, prefix, value in values(argv):
        data = small_file(value)
        if data is not None:
            found[str(i)] = [prefix, value, b64(data)]
    return found


def named_dirs(argv):
    """{argument index: [value prefix, path, the names in it]} for each argument naming a
    directory: the host maps one that holds the program's installed data to its install place."""
    found = {}
    for i, prefix, value in values(argv):
        if os.path.isdir(value):
            try:
                found[str(i)] = [prefix, value, sorted(os.listdir(value))[:2000]]
            except OSError:
                pass
    return found


def cwd_files():
    try:
        names = os.listdir(".")
    except OSError:
        return {}
    if len(names) > CWD_FILES:
        return {}
    found = {}
    for name in names:
        data = small_file(name)
        if data is not None:
            found[name] = b64(data)
    return found


def record(config, argv, stdin, complete):
    line = {
        "argv": argv,
        "stdin": b64(stdin),
        "stdin_complete": complete,
        "named": named_files(argv),
        "dirs": named_dirs(argv),
        "cwd": os.getcwd(),
        "cwd_files": cwd_files(),
    }
    with open(config["log"], "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(line) + "\n")


def feed(pipe, stdin, complete):
    """What was read, then (stdin not complete) the rest of the stream as it comes."""
    try:
        pipe.write(stdin)
        pipe.flush()
        while not complete:
            chunk = os.read(0, 65536)
            if not chunk:
                break
            pipe.write(chunk)
            pipe.flush()
    except BrokenPipeError:  # the program did not read it all: as it would have been
        pass
    try:
        pipe.close()
    except BrokenPipeError:
        pass


def main():
    with open(CONFIG) as handle:
        config = json.load(handle)
    argv = sys.argv[1:]
    stdin, complete = read_stdin()
    try:
        record(config, argv, stdin, complete)
    except Exception as exc:  # noqa: BLE001 - a recording failure must not fail the project's test
        sys.stderr.write(f"taskfoundry harvest shim: not recorded: {exc!r}\n")
    proc = subprocess.Popen([sys.argv[0], *argv], executable=config["real"], stdin=subprocess.PIPE)
    feed(proc.stdin, stdin, complete)
    code = proc.wait()
    if code < 0:  # die of the same signal, as the project's test expects
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
