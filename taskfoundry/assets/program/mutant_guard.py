#!/usr/bin/python3 -SE
"""Stands in for the program while a mutant is tested (stdlib only; taskfoundry's mutation analysis).

The tests run `/workspace/executable`, which is this script; it runs the mutant with the
same arguments, stdin and argv[0], relays its output, and returns its exit status (or dies
of the same signal). Which program, and which mutant of a schema is switched on
(`TF_MUTANT`), `current` says when the analysis writes one (one test session for
many mutants); else the settings do. A run that takes longer than the timeout, or writes
more than the cap, is killed, and a mark file says which, so the analysis counts the
mutant as `timeout` instead of as killed by a test. Settings: `key=value` lines in a file
beside the mutant.

It runs once per program call, so it imports what starts fastest (no json: it imports re,
17 ms; no signal: enum; no subprocess, no threads): posix_spawn in a session of its own,
and poll on the two output pipes.
"""

import _signal
import os
import resource
import select
import sys
import time

SETTINGS = "/task/mutant/guard.conf"
SIGKILL, SIGXFSZ = 9, 25


def mark(marks, kind):
    try:
        with open(os.path.join(marks, kind), "w") as handle:
            handle.write(kind)
    except OSError:
        pass


def load(path):
    """`key=value` lines as a dict; None when there is no such file."""
    try:
        with open(path) as handle:
            return dict(line.rstrip("\n").split("=", 1) for line in handle if "=" in line)
    except OSError:
        return None


def by_name(program, argv0):
    """`program`'s link named as the task calls it (<program>.d/executable), when the worker
    made one: a script's interpreter is handed the path it was run by, not argv[0] (a Python
    gold spawned as /task/mutant/reference printed "usage: reference")."""
    link = program + ".d/" + argv0.rsplit("/", 1)[-1]
    return link if os.access(link, os.X_OK) else program


def spawn(cfg, current):
    env = dict(os.environ)
    env.pop("TF_MUTANT", None)
    program = cfg["program"]
    if current:
        program = current["program"]
        if current.get("switch", "0") != "0":
            env["TF_MUTANT"] = current["switch"]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions = [
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
        (os.POSIX_SPAWN_CLOSE, out_r),
        (os.POSIX_SPAWN_CLOSE, err_r),
    ]
    program = by_name(program, cfg["argv0"])
    pid = os.posix_spawn(program, [cfg["argv0"], *sys.argv[1:]], env, file_actions=actions, setsid=True)
    os.close(out_w)
    os.close(err_w)
    return pid, {out_r: 1, err_r: 2}


def kill(pid):
    try:
        os.killpg(pid, SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def relay(pid, pipes, cap, timeout):
    """'timeout', 'flood' or None once both pipes are closed (or the run is killed)."""
    poller = select.poll()
    for fd in pipes:
        poller.register(fd, select.POLLIN | select.POLLHUP)
    end, total = time.monotonic() + timeout, 0
    while pipes:
        left = end - time.monotonic()
        if left <= 0:
            return "timeout"
        for fd, _ in poller.poll(left * 1000):
            data = os.read(fd, 65536)
            if not data:
                poller.unregister(fd)
                os.close(fd)
                del pipes[fd]
                continue
            total += len(data)
            if total > cap:
                return "flood"
            write_all(pipes[fd], data)
    return None


def write_all(fd, data):
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:  # nobody reads: the test stopped listening
        pass


def wait(pid, end):
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > end:
            return None
        time.sleep(0.002)


def reap(cfg):
    """Every other process of this uid, when `reap_from` says the program runs as a uid of its
    own: kill(-1) from that uid reaches exactly them (the C guard's `reap`)."""
    start = int(cfg.get("reap_from", "0"))
    if start > 0 and os.getuid() != 0 and os.geteuid() != 0 and os.getuid() >= start:
        os.kill(-1, SIGKILL)


def main():
    cfg = load(SETTINGS)
    cap, timeout = int(cfg["cap"]), float(cfg["timeout"])
    # inherited by the program; the hard limit stays, as the probe runner leaves it: a Python
    # gold unpacks itself past the cap (its own files), then writes under it again
    resource.setrlimit(resource.RLIMIT_FSIZE, (cap, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    start = time.monotonic()
    pid, pipes = spawn(cfg, load(cfg["current"]))
    why = relay(pid, pipes, cap, timeout)
    status = None if why else wait(pid, start + timeout)
    kill(pid)  # what it left behind in its session goes too
    reap(cfg)  # and anything of its uid elsewhere
    if why or status is None:
        why = why or "timeout"
        mark(cfg["marks"], why)
        os.waitpid(pid, 0)
        sys.exit(124 if why == "timeout" else 125)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == SIGXFSZ:
            mark(cfg["marks"], "flood")
            sys.exit(125)
        sys.stdout.flush()
        _signal.signal(sig, _signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
