"""The worker's attacks on the gold, run as the worker inside the cleanroom image as shipped.

Usage: python3 -I integrity_probe.py GOLD SCRATCH_DIR -> one JSON object on stdout,
{attack: {"result": "blocked" | "succeeded" | "not_applicable", "detail": str}}.

Each attack tries to run code inside the gold's process or to read its memory, the way a
worker who wants the reference's code would (ProgramBench#44): a preloaded library, an
audit module, a library path with a fake libc, /proc/<pid>/maps|mem|exe and ptrace of a
live gold, and a core dump. "succeeded" means the worker got code into the process, or
bytes or addresses out of it. Needs python3 and gcc (the cleanroom's toolchain).
"""

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

GOLD, SCRATCH = sys.argv[1], sys.argv[2]
# a loader attack shows at load, before main runs: a few seconds is enough, and a gold that
# never exits (a server, a REPL on a closed stdin) is judged on what it did in them
TIMEOUT = 3

MARKER_C = r"""
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
static void tf_mark(void) {
  const char *p = getenv("TF_MARK");
  if (p) { int fd = open(p, O_WRONLY | O_CREAT, 0644); if (fd >= 0) close(fd); }
}
__attribute__((constructor)) static void tf_ctor(void) { tf_mark(); }
unsigned int la_version(unsigned int v) { tf_mark(); return v; }
"""

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_TRACEME, PTRACE_PEEKTEXT, PTRACE_GETREGS, PTRACE_KILL, PTRACE_DETACH = 0, 1, 12, 8, 17


def outcome(ok, detail):
    return {"result": "succeeded" if ok else "blocked", "detail": detail[-400:]}


def compile_marker():
    src = os.path.join(SCRATCH, "tf_mark.c")
    with open(src, "w") as handle:
        handle.write(MARKER_C)
    lib = os.path.join(SCRATCH, "tf_mark.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", lib, src], check=True, capture_output=True)
    fakedir = os.path.join(SCRATCH, "fakelib")
    os.makedirs(fakedir, exist_ok=True)
    for name in ("libc.so.6", "libm.so.6", "libgcc_s.so.1", "libnss_files.so.2", "libnss_compat.so.2"):
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-o", os.path.join(fakedir, name), src, f"-Wl,-soname,{name}"],
            check=True,
            capture_output=True,
        )
    return lib, fakedir


def run_gold(env, marker):
    """Run the gold with `env` added; True when the marker appeared (code ran in it)."""
    if os.path.exists(marker):
        os.unlink(marker)
    full = {"PATH": "/usr/bin:/bin", "HOME": SCRATCH, "TF_MARK": marker, **env}
    try:
        proc = subprocess.run(
            [GOLD], env=full, cwd=SCRATCH, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT
        )
        err = proc.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as exc:
        err = (exc.stderr or b"").decode(errors="replace") + "\n(timed out)"
    return os.path.exists(marker), err


def loader_attacks(lib, fakedir):
    # a working fake libc needs glibc's internals; what the attack needs is that the loader
    # maps the worker's file, which LD_DEBUG shows (or the marker, when a fake resolves)
    envs = {
        "ld_preload": {"LD_PRELOAD": lib},
        "ld_audit": {"LD_AUDIT": lib},
        "fake_libc": {"LD_LIBRARY_PATH": fakedir, "LD_DEBUG": "libs"},
    }
    # at once, each with its own marker: a gold that never exits costs one TIMEOUT, not three
    with ThreadPoolExecutor(len(envs)) as pool:
        runs = {
            name: pool.submit(run_gold, env, os.path.join(SCRATCH, f"marker-{name}"))
            for name, env in envs.items()
        }
        (pre_ran, pre_err), (aud_ran, aud_err), (fake_ran, fake_err) = (runs[n].result() for n in envs)
    searched = f"file={fakedir}/" in fake_err or fake_ran
    return {
        "ld_preload": outcome(pre_ran, "preloaded code ran in the gold" if pre_ran else pre_err),
        "ld_audit": outcome(aud_ran, "audit module ran in the gold" if aud_ran else aud_err),
        "fake_libc": outcome(searched, f"the loader opened {fakedir}" if searched else fake_err),
    }


def traced_gold():
    """The gold stopped at its first instruction under ptrace (PTRACE_TRACEME, then exec)."""
    pid = os.fork()
    if pid == 0:
        try:
            libc.ptrace(PTRACE_TRACEME, 0, None, None)
            fd = os.open(os.devnull, os.O_RDWR)
            for target in (0, 1, 2):
                os.dup2(fd, target)
            os.execv(GOLD, [GOLD])
        finally:
            os._exit(127)
    os.waitpid(pid, os.WUNTRACED)
    return pid


def read_proc(pid, name, size=64):
    try:
        with open(f"/proc/{pid}/{name}", "rb") as handle:
            data = handle.read(size)
        return True, f"read {len(data)} bytes of /proc/{pid}/{name}"
    except OSError as exc:
        return False, str(exc)


def read_mem(pid, address):
    try:
        with open(f"/proc/{pid}/mem", "rb") as handle:
            handle.seek(address)
            data = handle.read(16)
        return bool(data), f"read {len(data)} bytes at {address:#x}"
    except (OSError, ValueError, OverflowError) as exc:
        return False, str(exc)


def instruction_pointer(pid):
    regs = (ctypes.c_ulonglong * 27)()
    if libc.ptrace(PTRACE_GETREGS, pid, None, ctypes.byref(regs)) != 0:
        return None
    return int(regs[16])  # rip in x86_64's user_regs_struct


def peek(pid, address):
    ctypes.set_errno(0)
    word = libc.ptrace(PTRACE_PEEKTEXT, pid, ctypes.c_void_p(address), None)
    err = ctypes.get_errno()
    if err:
        return False, os.strerror(err)
    return True, f"read word {word & 0xFFFFFFFFFFFFFFFF:#x} at {address:#x}"


def proc_attacks():
    pid = traced_gold()
    try:
        report = {f"proc_{name}": outcome(*read_proc(pid, name)) for name in ("maps", "exe")}
        rip = instruction_pointer(pid)
        if rip is None:
            report["proc_mem"] = outcome(False, "no registers")
            report["ptrace_peek"] = outcome(False, "no registers")
        else:
            report["proc_mem"] = outcome(*read_mem(pid, rip))
            report["ptrace_peek"] = outcome(*peek(pid, rip))
    finally:
        libc.ptrace(PTRACE_KILL, pid, None, None)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return report


def core_attack():
    with open("/proc/sys/kernel/core_pattern") as handle:
        pattern = handle.read().strip()
    if pattern.startswith("|") or pattern.startswith("/"):
        return {"result": "not_applicable", "detail": f"core_pattern is {pattern!r}: no core lands here"}
    where = os.path.join(SCRATCH, "cores")
    os.makedirs(where, exist_ok=True)
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(where)
            libc.ptrace(PTRACE_TRACEME, 0, None, None)
            os.execv(GOLD, [GOLD])
        finally:
            os._exit(127)
    os.waitpid(pid, os.WUNTRACED)
    libc.ptrace(PTRACE_DETACH, pid, None, ctypes.c_void_p(signal.SIGSEGV))
    os.waitpid(pid, 0)
    time.sleep(0.2)
    cores = [n for n in os.listdir(where) if n.startswith("core")]
    return outcome(bool(cores), f"core files: {cores}" if cores else "no core file")


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    report = {}
    try:
        report.update(loader_attacks(*compile_marker()))
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", b"") or str(exc).encode()
        for name in ("ld_preload", "ld_audit", "fake_libc"):
            report[name] = {"result": "not_applicable", "detail": f"no compiler: {detail[-200:]!r}"}
    report.update(proc_attacks())
    report["core_dump"] = core_attack()
    print(json.dumps(report, sort_keys=True))


main()
