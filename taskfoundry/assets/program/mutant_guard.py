#!/usr/bin/python3 -S
"""Stands in for the program while a mutant is tested (stdlib only; taskfoundry's mutation analysis).

The tests run `/workspace/executable`, which is this script; it runs the mutant with the
same arguments, stdin and argv[0], relays its output, and returns its exit status (or dies
of the same signal). A run that takes longer than the timeout, or writes more than the
cap, is killed, and a mark file says which, so the analysis counts the mutant as
`timeout` instead of as killed by a test. Settings: a JSON file beside the mutant.
"""

import json
import os
import resource
import signal
import subprocess
import sys
import threading

SETTINGS = "/task/mutant/guard.json"


def mark(marks, kind):
    try:
        with open(os.path.join(marks, kind), "w") as handle:
            handle.write(kind)
    except OSError:
        pass


def relay(src, dest, state, cap, kill):
    while True:
        data = src.read1(65536) if hasattr(src, "read1") else src.read(65536)
        if not data:
            return
        state["bytes"] += len(data)
        if state["bytes"] > cap:
            state["flood"] = True
            kill()
            return
        try:
            dest.write(data)
            dest.flush()
        except (BrokenPipeError, OSError):
            return


def main():
    with open(SETTINGS) as handle:
        cfg = json.load(handle)
    cap = int(cfg["cap"])

    def limits():
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    proc = subprocess.Popen(
        [cfg["argv0"], *sys.argv[1:]],
        executable=cfg["program"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=limits,
        start_new_session=True,
    )

    def kill():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    state = {"bytes": 0, "flood": False}
    pumps = [
        threading.Thread(target=relay, args=(proc.stdout, sys.stdout.buffer, state, cap, kill), daemon=True),
        threading.Thread(target=relay, args=(proc.stderr, sys.stderr.buffer, state, cap, kill), daemon=True),
    ]
    for pump in pumps:
        pump.start()
    try:
        code = proc.wait(timeout=float(cfg["timeout"]))
    except subprocess.TimeoutExpired:
        kill()
        mark(cfg["marks"], "timeout")
        proc.wait()
        sys.exit(124)
    for pump in pumps:
        pump.join(5)
    kill()  # what it left behind in its session goes too
    if state["flood"] or code == -signal.SIGXFSZ:
        mark(cfg["marks"], "flood")
        sys.exit(125)
    if code < 0:
        sys.stdout.flush()
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
