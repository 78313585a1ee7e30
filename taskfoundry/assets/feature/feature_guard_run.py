"""Run a feature task's tests under the guard, its records verified outside (as root).

usage: feature_guard_run.py OUT UID GID -- PYTHON BOOT CONFIG -- PYTEST_ARGS...

Root makes a random key and two pipes: the key goes down one (the boot reads it as root,
then closes it), records come back up the other. The child runs the boot as root; the boot
drops to the worker before any submitted code runs (assets/feature_boot.py). Every record
carries an HMAC chained over the records before it: root keeps those that verify, counts
those that do not (`forged`: written by something that is not the guard), and writes them
to OUT (in a directory only root can read), then one last line with the child's exit code.
"""

from __future__ import annotations

import hmac
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


def verify(key: bytes, stream: bytes) -> tuple[list[bytes], list[bytes]]:
    """(records whose chained HMAC verifies, lines that do not)."""
    mac = hmac.new(key, digestmod="sha256")
    good, bad = [], []
    for line in stream.split(b"\n"):
        if not line:
            continue
        data, _, sig = line.rpartition(b"\t")
        trial = mac.copy()
        trial.update(data + b"\n")
        if data and hmac.compare_digest(trial.hexdigest().encode(), sig):
            mac = trial
            good.append(data)
        else:
            bad.append(line[:200])
    return good, bad


def main(out: str, uid: str, gid: str, command: list[str]) -> int:
    python, boot, config = command[:3]
    key = os.urandom(32)
    key_read, key_write = os.pipe()
    read, write = os.pipe()
    os.write(key_write, key)
    os.close(key_write)
    argv = [python, "-I", boot, config, str(key_read), str(write), uid, gid, *command[3:]]
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.set_inheritable(write, True)
        os.set_inheritable(key_read, True)
        os.execve(python, argv, dict(os.environ))
    os.close(write)
    os.close(key_read)
    chunks: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(read, chunks), daemon=True)
    reader.start()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    reader.join(5)  # a process the tests left behind may hold the pipe open: not waited for
    good, bad = verify(key, b"".join(list(chunks)))
    with open(out, "wb") as sink:
        sink.write(b"".join(g + b"\n" for g in good))
        if bad:
            forged = {"k": "forged", "count": len(bad), "sample": bad[0].decode(errors="replace")}
            sink.write(json.dumps(forged).encode() + b"\n")
        sink.write(json.dumps({"k": "exit", "code": code}).encode() + b"\n")
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sep = sys.argv.index("--")
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[sep + 1 :]))
