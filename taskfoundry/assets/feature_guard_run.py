"""Run a feature task's tests as the worker, with the guard's records kept outside (as root).

usage: feature_guard_run.py UID GID OUT -- COMMAND...

Root makes a pipe, then a child drops to UID:GID (no supplementary groups) and runs
COMMAND with the pipe's write end as TF_GUARD_FD; tf_feature_guard, loaded by pytest,
writes there. Root copies what arrives into OUT (in a directory only root can read), then
one last line with the child's exit code, and exits with that code. The worker cannot
signal root, reopen the pipe, or reach OUT. Records are capped at MAX bytes.
"""

from __future__ import annotations

import json
import os
import sys
import threading

MAX = 16 * 1024 * 1024


def _drain(fd: int, chunks: list[bytes]) -> None:
    size = 0
    while chunk := os.read(fd, 65536):
        if size < MAX:
            chunks.append(chunk[: MAX - size])
            size += len(chunk)


def main(uid: int, gid: int, out: str, command: list[str]) -> int:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.set_inheritable(write, True)
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        os.execvpe(command[0], command, dict(os.environ, TF_GUARD_FD=str(write)))
    os.close(write)
    chunks: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(read, chunks), daemon=True)
    reader.start()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    reader.join(5)  # a process the tests left behind may hold the pipe open: not waited for
    with open(out, "wb") as sink:
        sink.write(b"".join(list(chunks)))
        sink.write(b"\n" + json.dumps({"k": "exit", "code": code}).encode() + b"\n")
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sep = sys.argv.index("--")
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[sep + 1 :]))
