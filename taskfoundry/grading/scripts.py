"""What the evaluator runs inside containers, kept apart from the Python that drives it."""

from __future__ import annotations

import shlex

# Run as root with `python3 -I` before any untrusted code in the container runs. Walks
# without following links, hashes regular files only, and fails (exit 1) on any file it
# cannot hash: a gold copy must never survive because of a read error. File names are
# printed as JSON, so a name with a newline cannot hide a match the way it can in
# `sha256sum | grep`. `--size=N` (the gold's sizes): only files of those sizes are hashed,
# so a huge (or sparse: 233 bytes of tar holding 200 GB) file costs a stat, not minutes.
REMOVE_HASHED = """\
import hashlib, json, os, stat, sys
root, args = sys.argv[1], sys.argv[2:]
sizes = {int(a[7:]) for a in args if a.startswith("--size=")}
hashes = {a for a in args if not a.startswith("--")}
removed, failed, hashed = [], [], 0
for top, dirs, files in os.walk(root):
    for name in files:
        path = os.path.join(top, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode) or (sizes and info.st_size not in sizes):
                continue
            digest, hashed = hashlib.sha256(), hashed + 1
            with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            if digest.hexdigest() in hashes:
                os.unlink(path)
                removed.append(path)
        except OSError as exc:
            failed.append(f"{path}: {exc}")
print(json.dumps({"removed": removed, "failed": failed, "hashed": hashed}))
sys.exit(1 if failed else 0)
"""
REMOVE_HASHED_PATH = "/tmp/tf-remove-hashed.py"
SUBMISSION_PATH = "/tmp/tf-submission.tar.gz"
COMPILE_LOG = "/tmp/tf-compile.log"
TESTS_LOG = "/tmp/tf-tests.log"

# Files in the workspace root that pytest would read (configuration, conftest) and the
# suite's own directory: removed before a branch's suite goes in, so a submission cannot
# steer the hidden suite's run. `__init__.py` too: pytest imports the rootdir's package
# while it collects, as the grader (dirsearch's tree has one).
PYTEST_STEERING = (
    "eval",
    "__init__.py",
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
    "__pycache__",
)

# The environment of the hidden suite: no current directory on sys.path (a `pytest.py`
# in the workspace cannot shadow pytest), no user site, no bytecode written.
TEST_ENV = {"PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def seal_cmd(isolate: bool, worker: str) -> str:
    """After the suite is in: with isolation, `eval/` belongs to root (the grader) alone, the
    workspace root to root (the program cannot rename `eval` or add a conftest), and the rest
    is readable by the program's uid; without it (ProgramBench's level) the worker owns `eval`."""
    if not isolate:
        return f"chown -R {worker} eval"
    return "chmod -R a+rX . && chown -R 0:0 eval && chmod -R go-rwx eval && chown 0:0 . && chmod 0755 ."


def remove_hashed_cmd(root: str, hashes: list[str], sizes: frozenset[int] = frozenset()) -> str:
    """`sizes`: the gold's sizes in bytes; empty: hash every file (the gold is not known)."""
    flags = [f"--size={n}" for n in sorted(sizes)]
    return shlex.join(["python3", "-I", REMOVE_HASHED_PATH, root, *flags, *hashes])


def extract_cmd(workspace: str) -> str:
    return f"tar -xzf {SUBMISSION_PATH} -C {workspace} --no-same-owner && rm -f {SUBMISSION_PATH}"


def scrub_cmd() -> str:
    return "rm -rf -- " + " ".join(shlex.quote(n) for n in PYTEST_STEERING)


def compile_cmd() -> str:
    return "chmod +x ./compile.sh && ./compile.sh"


def run_tests_cmd(workers: int) -> str:
    extra = f" -n {workers}" if workers > 1 else ""
    return f"chmod +x ./eval/run.sh && ./eval/run.sh{extra}"


def logged(command: str, logfile: str) -> str:
    """`command` with its output in `logfile`: background children it leaves behind hold the
    file, not the exec stream, so the step ends when the command does. The log is made 0600
    first (the runner's alone): the program under test must not read the live pass/fail
    stream of the suite that grades it."""
    return f"(umask 077 && : > {logfile}) && ( {command} ) >> {logfile} 2>&1"
