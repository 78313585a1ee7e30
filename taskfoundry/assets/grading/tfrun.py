"""Runs the program under test for taskfoundry's behavioral tests.

The executable is `$TF_EXECUTABLE`, by default `executable` in the workspace
(two levels above this file: eval/tests/tfrun.py), so the same tests run
against the gold program, the dummies and a submission.

Isolation (taskfoundry's grading harness sets `TF_PROGRAM_UID` and runs pytest as
root, the grader): each call runs the program as an unprivileged uid of its own
(`TF_PROGRAM_UID` + the pytest-xdist worker's number), in a working directory that
uid owns only while the call lasts. That uid cannot read `eval/` (tests, this
helper, the report), cannot signal or trace pytest, and every process it started
is killed before the call returns. Without `TF_PROGRAM_UID`, or when pytest does
not run as root (another evaluator), the program runs as pytest's own user.

The uid is dropped by util-linux's `setpriv` where the image has it: a process started as
root is vforked, while one Python starts as another uid is forked whole, and forking a
pytest of 70 MB costs 10 ms or more, twice a call (the program, then the reaper).
"""

from __future__ import annotations

import json
import os
import re
import select
import selectors
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

WORKSPACE = Path(__file__).resolve().parents[2]
TIMEOUT = float(os.environ.get("TF_TIMEOUT", "10"))
SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin")
DROPPER = "/usr/local/sbin/tfdrop"  # assets/grading/tfdrop.c, where the image has it compiled
KILL_ALL = ["/bin/sh", "-c", "kill -9 -1 2>/dev/null; exit 0"]


# a clock a program prints (Go's log: "2026/11/27 22:06:45", ISO 8601): where the reference's
# output showed one, a test compares the output with every such stamp written CLOCK_MARK
CLOCK = re.compile(r"\b\d{4}([-/])\d\d\1\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?")
CLOCK_MARK = "<clock>"


def clock(text):
    """`text` with each date-and-time stamp written CLOCK_MARK."""
    return CLOCK.sub(CLOCK_MARK, text)


# the call's own directory (its cwd and HOME), where the reference's output named it: each run
# has a directory of its own (the explorer's probe directory then, pytest's tmp_path now)
HERE_MARK = "<cwd>"


def here(text, cwd):
    """`text` with the directory `cwd` (as given and resolved) written HERE_MARK."""
    for path in sorted({str(cwd), os.path.realpath(cwd)}, key=len, reverse=True):
        text = text.replace(path, HERE_MARK)
    return text


# the directory a Python gold unpacks itself to (builders/detect_python's __main__: tf-app- and
# 24 hex digits of its content). A line naming it (a Python warning's or traceback's source
# path, a help text's install path) says where that build put itself, which no rebuild shares:
# it is no part of an output, as run() and the explorer's outcomes read them
UNPACKED_AT = re.compile(r"\btf-app-[0-9a-f]{24}\b")


def unpacked(text):
    """`text` without the lines naming a gold's unpack directory (UNPACKED_AT), each with the
    line after it where that one is indented deeper (the source line a warning or a traceback
    prints under the path)."""
    if not UNPACKED_AT.search(text):
        return text
    out, under = [], None
    for line in text.splitlines(keepends=True):
        depth = len(line) - len(line.lstrip(" "))
        if under is not None and line.strip() and depth > under:
            under = None
            continue
        under = depth if UNPACKED_AT.search(line) else None
        if under is None:
            out.append(line)
    return "".join(out)


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


def executable() -> str:
    return os.environ.get("TF_EXECUTABLE", str(WORKSPACE / "executable"))


# program.json beside this file, where the task has one: {"called_as": NAME} for a program that
# picks what it does by the name it is called by (a multi-call binary: uutils' diffutils, busybox)
PROGRAM_JSON = Path(__file__).with_name("program.json")


def called_as(path=PROGRAM_JSON):
    """The name a program.json (this suite's, or the one at `path`) says the program is called
    by, or None: a file that is missing or no JSON object, or a name with a "/", names none."""
    try:
        name = json.loads(Path(path).read_text()).get("called_as")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and name and "/" not in name else None


def argv0():
    """argv[0] of each call: TF_ARGV0 during generation, else the program's path, or the path
    beside it named as program.json says (the file stays `executable`; its name is argv[0]'s)."""
    name = called_as()
    return os.environ.get("TF_ARGV0") or (str(Path(executable()).with_name(name)) if name else executable())


def program_uid():
    """The uid this pytest worker runs programs as, or None (no isolation)."""
    base = os.environ.get("TF_PROGRAM_UID")
    if not base or os.geteuid() != 0:
        return None
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(base) + int(worker.lstrip("gw") or 0)


def run(args, stdin="", files=None, cwd=None, timeout=None):
    """Run the program with `args` in `cwd`, after writing `files` (relative path -> text, or
    bytes for a binary input);
    `stdin` is text or bytes. `timeout`: the seconds a slow program's suite gives each call
    (the explorer's longer probe time, doubled), when longer than TF_TIMEOUT's."""
    cwd = Path(cwd or os.getcwd())
    tmp = own_tmp(cwd)
    for name, content in (files or {}).items():
        path = cwd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(cwd),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
    }
    # generation only: coverage variables named in TF_PASSENV reach the program
    for name in filter(None, os.environ.get("TF_PASSENV", "").split(":")):
        if name in os.environ:
            env[name] = os.environ[name]
    data = stdin.encode() if isinstance(stdin, str) else stdin  # bytes: binary input
    uid = program_uid()
    argv, how = _as_uid(uid, [argv0(), *args], executable())
    if uid is not None:
        _lend(cwd, uid)
        _lend(tmp, uid)
    try:
        with subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            **how,
        ) as proc:
            try:
                stdout, stderr = _communicate(proc, data, max(TIMEOUT, timeout or 0))
            except subprocess.TimeoutExpired:
                proc.kill()  # as subprocess.run does
                raise
    finally:
        if uid is not None:
            reap(uid)
            _reclaim(cwd)
            _reclaim(tmp)
    return Result(
        proc.returncode,
        unpacked(stdout.decode("utf-8", "replace")),
        unpacked(stderr.decode("utf-8", "replace")),
    )


def own_tmp(cwd):
    """The call's temporary directory (TMPDIR), `<cwd>.tmp` beside its working directory, as the
    probe runner makes it: a program's temporary files are its call's alone. In /tmp itself,
    ansible-lint's cache (/tmp/.ansible-0aaa) was made by the first pytest worker's uid, and
    every call on the other worker failed on it: the gold graded 53 of 96. Beside, not inside:
    a program that lists its directory (ansible-lint counts the files it finds) sees the same."""
    tmp = Path(f"{cwd}.tmp")
    try:
        tmp.mkdir(mode=0o700, exist_ok=True)
    except OSError:  # no room beside it (the workspace, read-only): a fresh one of its own
        return Path(tempfile.mkdtemp(prefix="tf-call-"))
    return tmp


def _communicate(proc, data, timeout):
    """(stdout, stderr) of `proc` once `data` went to its stdin and it ended; TimeoutExpired
    after `timeout` seconds. Popen.communicate, but a pidfd wakes it at the program's exit
    where Python's own wait with a timeout naps 1, 2, 4 ms between looks (a call cost 1 ms
    more); where there is no pidfd, that wait."""
    end = time.monotonic() + timeout
    chunks = {proc.stdout: [], proc.stderr: []}
    pending = memoryview(data)
    with selectors.PollSelector() as sel:
        for pipe in chunks:
            sel.register(pipe, selectors.EVENT_READ)
        if pending:
            sel.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        while sel.get_map():
            left = end - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout)
            for key, _ in sel.select(left):
                if key.fileobj is proc.stdin:
                    pending = _feed(key.fd, pending)
                    if not pending:
                        sel.unregister(proc.stdin)
                        proc.stdin.close()
                elif block := os.read(key.fd, 65536):
                    chunks[key.fileobj].append(block)
                else:
                    sel.unregister(key.fileobj)
    _wait(proc, end)
    return b"".join(chunks[proc.stdout]), b"".join(chunks[proc.stderr])


def _feed(fd, pending):
    """What is left of `pending` after one write to the program's stdin (none once it closed it)."""
    try:
        return pending[os.write(fd, pending[: select.PIPE_BUF]) :]
    except BrokenPipeError:
        return pending[:0]


def _wait(proc, end):
    left = max(end - time.monotonic(), 0)
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        proc.wait(left)
        return
    try:
        if not select.select([pidfd], [], [], left)[0]:
            raise subprocess.TimeoutExpired(proc.args, left)
    finally:
        os.close(pidfd)
    proc.wait()


def _as_uid(uid, argv, program):
    """(argv, keyword arguments) for subprocess to run `program` as `argv` as `uid`, with no
    supplementary group (None: as pytest's own user). Through tfdrop (where the image has it,
    root's alone) or setpriv when argv[0] is the program's path (what they exec it as): every
    uid, real, effective and saved, is `uid`, and the program's exec leaves it no capability."""
    if uid is None:
        return argv, {"executable": program}
    if argv[0] == program and _trusted(DROPPER):
        return [DROPPER, str(uid), *argv], {}
    if SETPRIV and argv[0] == program:
        return [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *argv], {}
    return argv, {"executable": program, "user": uid, "group": uid, "extra_groups": []}


def _trusted(path):
    """Whether `path` is a root-owned executable only root may change (nor swap: its directory
    too): tfrun hands it root's credentials to drop."""
    try:
        own, parent = os.stat(path), os.stat(os.path.dirname(path))
    except OSError:
        return False
    return all(st.st_uid == 0 and not st.st_mode & 0o022 for st in (own, parent)) and bool(
        own.st_mode & 0o100
    )


def _lend(cwd, uid):
    """`cwd` and what the test wrote there belong to `uid` for the call; its parents (the
    grader's, 0700) become traversable but not listable, so an absolute path to `cwd` works
    while other tests' directories stay unknown and unwritable."""
    _chown_tree(cwd, uid)
    for parent in cwd.resolve().parents:
        mode = os.stat(parent).st_mode
        if mode & 0o011 != 0o011:
            os.chmod(parent, (mode & 0o7777) | 0o011)


def _reclaim(cwd):
    """Back to the grader: a later program of the same uid cannot touch a finished test's files.
    What the program left that root must not follow goes first: a link that leads out of
    `cwd` (to the hidden tests, say: root would read them into the report) and any special
    file (a FIFO would hang the test that opens it)."""
    _remove_unsafe(cwd)
    _chown_tree(cwd, 0)


def _remove_unsafe(top):
    """Links resolving outside `top` and non-regular, non-directory files, never followed."""
    real = os.path.realpath(top)
    for parent, dirs, names in os.walk(top):
        for name in [*dirs, *names]:
            path = os.path.join(parent, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                target = os.path.realpath(path)
                if target != real and not target.startswith(real + os.sep):
                    os.unlink(path)
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                os.unlink(path)


def _chown_tree(top, uid):
    """`top` and everything under it (links themselves, never their targets) to `uid`."""
    for parent, dirs, names in os.walk(top):
        for name in [*dirs, *names]:
            os.lchown(os.path.join(parent, name), uid, uid)
    os.chown(top, uid, uid)


def reap(uid, rounds=50):
    """Kill every process of `uid`. kill(-1) from a process of that uid reaches exactly its
    own processes (and is atomic against fork), so a fork bomb is gone in one round.
    `TF_REAPED`: the executable did that itself as it ended (taskfoundry's mutant guard), so
    only a look is needed; a program it left (the call timed out first) is killed here."""
    if os.environ.get("TF_REAPED") == "1" and not _alive(uid):
        return
    argv, drop = _as_uid(uid, KILL_ALL, KILL_ALL[0])
    for _ in range(rounds):
        subprocess.run(
            argv,
            **drop,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin"},
        )
        if not _alive(uid):
            return
        time.sleep(0.01)
    raise RuntimeError(f"processes of uid {uid} survived {rounds} rounds of kill -9")


def _alive(uid):
    """Live (not zombie) processes whose real uid is `uid`."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:  # gone meanwhile
            continue
        if fields.get("State", "").strip().startswith("Z"):
            continue
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            return True
    return False
