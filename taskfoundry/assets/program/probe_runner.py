#!/usr/bin/env python3
"""Runs a batch of probes against one executable inside a sandbox (stdlib only).

Reads a JSON job on stdin, writes a JSON result on stdout. Each probe runs in
its own fresh directory with a minimal environment, a timeout, a cap on output
and file size (RLIMIT_FSIZE), and, in coverage mode, its own coverage output
directory, so that each probe's covered lines are known on their own.
"""

import base64
import functools
import glob
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor


def probe_env(workdir):
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir + ".tmp",  # the call's own, as tfrun's own_tmp makes it
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
    }


class Limited:
    """The runner's own soft limits on file size and core dumps while it starts a program,
    which inherits them: a `preexec_fn` would make Python fork the runner whole where it
    otherwise vforks (a probe cost 2 ms more). The hard limits stay: a program of the
    reference's could raise its own soft limit, which none does by accident."""

    def __init__(self, cap):
        self.want = {resource.RLIMIT_FSIZE: cap, resource.RLIMIT_CORE: 0}
        self.saved = {}

    def __enter__(self):
        for which, want in self.want.items():
            self.saved[which] = soft_hard = resource.getrlimit(which)
            hard = soft_hard[1]
            resource.setrlimit(which, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))

    def __exit__(self, *exc):
        for which, saved in self.saved.items():
            resource.setrlimit(which, saved)


SPAWN = threading.Lock()

#: stdin this small fits the pipe's buffer: written at once, no writer loop needed
PIPE_SIZE = 65536


def feed_and_wait(proc, data, timeout):
    """Whether `proc` ended within `timeout` after `data` went to its stdin. A pidfd wakes at
    its exit: Python's own wait with a timeout naps 1, 2, 4 ms... between looks."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if len(data) > PIPE_SIZE or pidfd_open is None:
        try:
            proc.communicate(data, timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
        except BrokenPipeError:
            return True
    try:
        proc.stdin.write(data)
        proc.stdin.close()
    except BrokenPipeError:  # it ended, or closed its stdin, without reading it all
        pass
    fd = pidfd_open(proc.pid)
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def decode(data):
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode()}


# tfrun.HERE_MARK: the probe's own directory (its cwd and HOME) where the program printed it
HERE_MARK = "<cwd>"


def here(decoded, workdir):
    """A decoded output with the probe's directory written HERE_MARK: ansible-lint names its
    HOME's .ansible in every lint, and each run has a directory of its own (24 of its probes
    were dropped as not reproducible)."""
    if "text" not in decoded:
        return decoded
    text = decoded["text"]
    for path in sorted({os.path.realpath(workdir), workdir}, key=len, reverse=True):
        text = text.replace(path, HERE_MARK)
    return {"text": text}


def stdin_bytes(stdin):
    return stdin.encode("utf-8") if isinstance(stdin, str) else base64.b64decode(stdin["b64"])


def write_inputs(workdir, files):
    for name, content in files.items():
        path = os.path.join(workdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(
                content.encode("utf-8") if isinstance(content, str) else base64.b64decode(content["b64"])
            )


def snapshot(workdir, cap):
    """Files in the work directory after the run, by relative path."""
    found = {}
    for root, _dirs, names in os.walk(workdir):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, workdir)
            try:
                with open(path, "rb") as handle:
                    data = handle.read(cap + 1)
            except OSError:
                continue
            found[rel] = decode(data) if len(data) <= cap else {"large": True}
    return found


# the coverage runtime writes its data in the program's own process, under its file-size limit:
# bmap-rs's profraw (tokio, reqwest) passed 1 MB and every coverage run died of SIGXFSZ
COVERAGE_FILE_CAP = 1 << 30


def file_cap(job, covdir):
    """The largest file a program may write: four times the output cap, or, when its
    coverage data is collected, what that data may grow to."""
    cap = job["output_cap"] * 4
    return max(cap, COVERAGE_FILE_CAP) if covdir else cap


def run_probe(job, probe, workdir, covdir):
    os.makedirs(workdir)
    os.makedirs(workdir + ".tmp")
    write_inputs(workdir, probe.get("files", {}))
    before = snapshot(workdir, job["output_cap"])
    env = probe_env(workdir)
    env.update(job.get("env") or {})
    env.update(probe.get("env") or {})  # this probe's own: a mutant's switch, in a batch of many
    if covdir:
        os.makedirs(covdir, exist_ok=True)
        env.update(coverage_env(job.get("coverage"), covdir))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # argv[0] as the worker's program sees it, so usage and error lines name the same path
        argv0 = job.get("argv0") or job["executable"]
        started = time.monotonic()
        with SPAWN, Limited(file_cap(job, covdir)):  # the limits are the process's: one spawn at a time
            proc = subprocess.Popen(
                [argv0, *probe["args"]],
                executable=job["executable"],
                cwd=workdir,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        timed_out = not feed_and_wait(proc, stdin_bytes(probe.get("stdin", "")), job["timeout"])
        seconds = time.monotonic() - started
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(job["output_cap"] + 1), err.read(job["output_cap"] + 1)
    after = snapshot(workdir, job["output_cap"])
    written = {k: v for k, v in after.items() if before.get(k) != v}
    return {
        "id": probe["id"],
        "exit_code": proc.returncode,
        "timed_out": timed_out,
        "truncated": max(len(stdout), len(stderr)) > job["output_cap"],
        "stdout": here(decode(stdout[: job["output_cap"]]), workdir),
        "stderr": here(decode(stderr[: job["output_cap"]]), workdir),
        "files": written,
        "seconds": round(seconds, 3),
    }


# coverage readers: each returns (covered, total) as {file: sorted lines} ------------------
def sh(argv, **kw):
    """Run a coverage tool to its end. Started under SPAWN: a probe's spawn in another
    thread lowers the process's file-size limit, and a tool started then would inherit it."""
    with SPAWN:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


DEFAULT_EXCLUDE = ("target/", "vendor/", ".cargo/", "third_party/")


def first_party(path, root, exclude=DEFAULT_EXCLUDE):
    """Path relative to the coverage root, or None for what is not the program's own.

    `exclude` holds directories (ending in "/", every file under them) and single files
    (a generated scanners.c: that path only)."""
    path = os.path.normpath(path)
    if not path.startswith(root.rstrip("/") + "/"):
        return None
    rel = os.path.relpath(path, root)
    dirs = tuple(e for e in exclude if e.endswith("/"))
    return None if rel.startswith(dirs) or rel in exclude else rel


def excluded(job):
    return tuple(job.get("exclude") or DEFAULT_EXCLUDE)


def merge(acc, name, line, hit):
    covered, total = acc
    total.setdefault(name, set()).add(line)
    if hit:
        covered.setdefault(name, set()).add(line)


def read_gcov(job, covdir):
    acc = ({}, {})
    root = job["cov_root"]
    for gcda in glob.glob(os.path.join(covdir, "**", "*.gcda"), recursive=True):
        orig_dir = os.path.dirname(gcda)[len(covdir) :] or "/"
        gcno = os.path.join(orig_dir, os.path.basename(gcda)[:-5] + ".gcno")
        if not os.path.exists(gcno):
            continue
        shutil.copy(gcno, os.path.dirname(gcda))
        res = sh(["gcov", "--json-format", "--stdout", "-o", os.path.dirname(gcda), gcda], cwd=root)
        for line in res.stdout.splitlines():
            if not line.strip().startswith("{"):
                continue
            data = json.loads(line)
            cwd = data.get("current_working_directory", root)
            for entry in data.get("files", []):
                name = first_party(os.path.join(cwd, entry["file"]), root, excluded(job))
                for rec in entry.get("lines", []) if name else []:
                    merge(acc, name, rec["line_number"], rec["count"] > 0)
    return acc


@functools.cache
def rustc_llvm():
    """The major version of rustc's LLVM ('' when unknown), asked once a batch: `rustc -vV`
    through rustup's proxy took a tenth of a second, twice a probe."""
    version = sh(["rustc", "-vV"]).stdout if shutil.which("rustc") else ""
    found = re.search(r"^LLVM version: (\d+)", version, re.M)
    return found.group(1) if found else ""


def llvm_tool(name):
    """`name` of rustc's own LLVM: a profile is read by the LLVM that wrote it (rustc-web 1.96
    writes LLVM 22's; an older llvm-profdata refuses it), else the one on PATH."""
    major = rustc_llvm()
    path = f"/usr/lib/llvm-{major}/bin/{name}" if major else ""
    return path if path and os.path.exists(path) else name


def read_llvm(job, covdir):
    acc = ({}, {})
    raws = glob.glob(os.path.join(covdir, "*.profraw"))
    if not raws:
        return acc
    prof = os.path.join(covdir, "merged.profdata")
    if sh([llvm_tool("llvm-profdata"), "merge", "-sparse", "-o", prof, *raws]).returncode != 0:
        return acc
    export = [llvm_tool("llvm-cov"), "export", "-format=lcov", "-skip-functions", "-instr-profile", prof]
    # only the files under the coverage root: ripcalc's whole export was 279,000 lines (its 201
    # crates), its own 3,000, and the export and its reading took most of a probe's time
    out = sh([*export, job["executable"], job["cov_root"]]).stdout
    if "\nSF:" not in "\n" + out:  # none there by that name: the whole export, filtered here
        out = sh([*export, job["executable"]]).stdout
    name = None
    for line in out.splitlines():
        if line.startswith("SF:"):
            name = first_party(line[3:], job["cov_root"], excluded(job))
        elif line.startswith("DA:") and name:
            num, count = line[3:].split(",")[:2]
            merge(acc, name, int(num), int(count) > 0)
    return acc


def read_go(job, covdir):
    acc = ({}, {})
    if not os.listdir(covdir):
        return acc
    out = os.path.join(covdir, "profile.txt")
    sh(
        ["go", "tool", "covdata", "textfmt", "-i=" + covdir, "-o=" + out],
        env={**os.environ, "HOME": covdir, "GOCACHE": os.path.join(covdir, ".gocache")},
    )
    if not os.path.exists(out):
        return acc
    module = job.get("go_module", "")
    with open(out) as handle:
        for line in handle:
            if line.startswith("mode:") or ":" not in line:
                continue
            loc, _stmts, count = line.rsplit(" ", 2)
            path, span = loc.rsplit(":", 1)
            rel = path[len(module) + 1 :] if module and path.startswith(module + "/") else path
            name = first_party(os.path.join(job["cov_root"], rel), job["cov_root"], excluded(job))
            start, end = span.split(",")
            for num in range(int(start.split(".")[0]), int(end.split(".")[0]) + 1):
                if name:
                    merge(acc, name, num, int(count) > 0)
    return acc


_STATEMENTS = {}  # path -> executable lines; a file's statements are the same every probe


def read_python(job, covdir):
    """coverage.py data files the wrapper wrote for this probe (`.coverage.*` in covdir).

    Read in this process when coverage.py imports here: two interpreter starts per probe
    (`coverage combine`, `coverage json`) otherwise cost more than most probes' runs."""
    found = glob.glob(os.path.join(covdir, ".coverage.*")) if os.path.isdir(covdir) else []
    if not found:
        return ({}, {})
    try:
        return read_python_data(job, found)
    except Exception:  # noqa: BLE001 - any trouble with the API: the command line still works
        return read_python_cli(job, covdir)


def read_python_data(job, found):
    import coverage

    acc = ({}, {})
    for name in found:
        data = coverage.CoverageData(basename=name)
        data.read()
        for path in data.measured_files():
            rel = first_party(path, job["cov_root"], excluded(job))
            if not rel:
                continue
            if path not in _STATEMENTS:
                analysis = coverage.Coverage(data_file=None, config_file=False).analysis2(path)
                _STATEMENTS[path] = analysis[1]
            executed = set(data.lines(path) or ())
            for num in _STATEMENTS[path]:
                merge(acc, rel, num, num in executed)
    return acc


def read_python_cli(job, covdir):
    acc = ({}, {})
    data, out = os.path.join(covdir, ".coverage"), os.path.join(covdir, "coverage.json")
    env = {**os.environ, "HOME": covdir}
    sh(
        ["python3", "-m", "coverage", "combine", "--rcfile=/dev/null", "--data-file=" + data, covdir],
        cwd=covdir,
        env=env,
    )
    sh(
        [
            "python3",
            "-m",
            "coverage",
            "json",
            "--rcfile=/dev/null",
            "--data-file=" + data,
            "-o",
            out,
            "--ignore-errors",
        ],
        cwd=covdir,
        env=env,
    )
    if not os.path.exists(out):
        return acc
    with open(out) as handle:
        files = json.load(handle).get("files", {})
    for path, info in files.items():
        name = first_party(os.path.join(covdir, path), job["cov_root"], excluded(job))
        for num in info.get("executed_lines", []) if name else []:
            merge(acc, name, num, True)
        for num in info.get("missing_lines", []) if name else []:
            merge(acc, name, num, False)
    return acc


READERS = {"gcov": read_gcov, "llvm": read_llvm, "go": read_go, "python": read_python}


def coverage_env(kind, covdir):
    """Environment that sends one run's coverage data into `covdir`."""
    if kind == "gcov":
        return {"GCOV_PREFIX": covdir, "GCOV_PREFIX_STRIP": "0"}
    if kind == "llvm":
        return {"LLVM_PROFILE_FILE": os.path.join(covdir, "%p-%m.profraw")}
    if kind == "go":
        return {"GOCOVERDIR": covdir}
    if kind == "python":
        return {"TF_PYCOV_DIR": covdir}
    return {}


def read_coverage_main():
    """--read-coverage: job {coverage, cov_root, executable, go_module, covdir} on stdin."""
    job = json.load(sys.stdin)
    covered, total = READERS[job["coverage"]](job, job["covdir"])
    json.dump(
        {
            "covered": {k: sorted(v) for k, v in covered.items()},
            "total": {k: sorted(v) for k, v in total.items()},
        },
        sys.stdout,
    )


def fresh(watch):
    """The watch build's file, empty and the runner's (the program appends to it); False when
    it cannot be made so (another user's file): the run then records nothing."""
    try:
        if os.path.lexists(watch):
            os.unlink(watch)
        with open(watch, "w"):
            return True
    except OSError:
        return False


def not_run(probe):
    """A probe the deadline left unstarted: as one that did not finish in time, which tells
    nothing (no test, no killer, no reference outcome)."""
    empty = {"text": ""}
    return {
        "id": probe["id"],
        "exit_code": -1,
        "timed_out": True,
        "truncated": False,
        "stdout": empty,
        "stderr": empty,
        "files": {},
        "not_run": True,
    }


def infected(watch):
    """The switch numbers the watch build wrote to `watch` during the last probe."""
    with open(watch) as handle:
        return sorted({int(n) for n in handle.read().split() if n.isdigit()})


def main():
    if sys.argv[1:] == ["--read-coverage"]:
        read_coverage_main()
        return
    job = json.load(sys.stdin)
    tempfile.tempdir = job.get("workroot", "/tmp")  # the probes' output files too
    base = tempfile.mkdtemp(prefix="probes-")
    # a watch build's file tells which mutants the last probe reached: one probe at a time
    workers = 1 if job.get("watch") else max(int(job.get("parallel", 1)), 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda probe: one_probe(job, probe, base), job["probes"]))
    shutil.rmtree(base, ignore_errors=True)
    json.dump({"results": results}, sys.stdout)


def one_probe(job, probe, base):
    """Run one probe and read its coverage; each has its own work and coverage directories.
    Past the job's `stop_at` (the caller's deadline, wall clock) it is not started."""
    if job.get("stop_at") and time.time() >= job["stop_at"]:
        return not_run(probe)
    reader = READERS.get(job.get("coverage", ""))
    covdir = os.path.join(base, "cov", probe["id"]) if reader else None
    watch = job.get("watch") or None
    watch = watch if watch and fresh(watch) else None  # emptied before each probe
    result = run_probe(job, probe, os.path.join(base, "w", probe["id"]), covdir)
    if watch:
        result["infects"] = infected(watch)
    if reader:
        covered, total = reader(job, covdir)
        result["covered"] = {k: sorted(v) for k, v in covered.items()}
        result["total"] = {k: sorted(v) for k, v in total.items()}
        shutil.rmtree(covdir, ignore_errors=True)
    for done in ("", ".tmp"):
        shutil.rmtree(os.path.join(base, "w", probe["id"] + done), ignore_errors=True)
    return result


if __name__ == "__main__":
    main()
