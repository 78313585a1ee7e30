#!/usr/bin/env python3
"""Scans a cleanroom container for leaks (stdlib only; runs as root, judges as the worker).

argv: CONFIG.json (written by taskfoundry.kinds.program.cleanroom.leakscan). Walks the whole file system,
skips what Debian packages own, and reports what the worker could reach: source files,
build trees and caches, foreign .git, copies of the gold, hidden tests, copies of source
files, and hardening defects. Text files the host should parse go into a tar.
Writes {"findings": [...], "candidates": N, "files": N, "notes": [...]} to the config's out_json.
`argv: --proc` runs only the /proc check, as the worker (the root run starts it so).
"""

import glob
import hashlib
import json
import os
import pwd
import re
import stat
import subprocess
import sys
import tarfile
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

SKIP_ROOTS = ("/proc", "/sys", "/dev")
ARTIFACT_EXT = {
    ".o",
    ".obj",
    ".a",
    ".rlib",
    ".rmeta",
    ".d",
    ".gcno",
    ".gcda",
    ".profraw",
    ".profdata",
    ".pyc",
    ".pyo",
    ".so",
    ".dylib",
    ".pdb",
    ".dwo",
}
BUILD_FILES = {
    "Makefile",
    "makefile",
    "GNUmakefile",
    "CMakeLists.txt",
    "Cargo.toml",
    "Cargo.lock",
    "go.mod",
    "go.sum",
    "meson.build",
    "configure.ac",
    "Makefile.am",
    "Makefile.in",
    "build.sh",
    "pyproject.toml",
    "setup.cfg",
    "taskfoundry.yaml",
    "CMakeCache.txt",
    "build.ninja",
    "compile_commands.json",
}
BUILD_DIRS = {
    "target",
    "build",
    "_build",
    "builddir",
    "CMakeFiles",
    "cmake-build-debug",
    "cmake-build-release",
    "__pycache__",
    "node_modules",
}
CACHE_DIRS = {
    ".cargo",
    ".rustup",
    "go-build",
    ".cache",
    ".ccache",
    ".sccache",
    ".gradle",
    ".m2",
    ".npm",
    ".stack",
    "gocache",
    "gomodcache",
}
TEST_NAME = re.compile(
    r"^(test_.*\.py|.*_test\.py|conftest\.py|tfrun\.py|.*_test\.go|tests\.json"
    r"|results\.xml|[0-9a-f]{12}\.tar\.gz)$"
)
# Package manager state: unowned but Debian's; no text from here is parsed (other checks run).
SYSTEM_STATE = (
    "/var/lib/dpkg/",
    "/var/lib/apt/",
    "/var/cache/debconf/",
    "/var/cache/apt/",
    "/var/cache/ldconfig/",
    "/var/log/",
    "/etc/ssl/certs/",
    "/var/lib/systemd/",
    "/var/lib/pam/",
    "/var/lib/ucf/",
)
MIN_HASH_BYTES = 64


class Stat:
    """The fields of an os.stat_result the checks read, from a recorded listing."""

    __slots__ = ("st_mode", "st_uid", "st_gid", "st_size")

    def __init__(self, mode, uid, gid, size):
        self.st_mode, self.st_uid, self.st_gid, self.st_size = mode, uid, gid, size


def _load_listing(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def finding(path, kind, evidence):
    return {"path": path, "kind": kind, "evidence": evidence}


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dpkg_owned():
    """Every path a Debian package installed, also under its /usr-merged real directory."""
    owned, top = set(), {}
    for listing in glob.glob("/var/lib/dpkg/info/*.list"):
        with open(listing, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                path = line.rstrip("\n")
                owned.add(path)
                first = path.split("/", 2)[1] if path.count("/") > 1 else ""
                if first not in top:  # /bin -> usr/bin and the like
                    link = "/" + first
                    top[first] = os.path.realpath(link) if os.path.islink(link) else None
                if top[first]:
                    owned.add(top[first] + path[len(first) + 1 :])
    return owned


class Worker:
    """Who the worker is, and what the permission bits let it do."""

    def __init__(self, uid, gid):
        self.uid, self.gid = uid, gid
        try:
            name = pwd.getpwuid(uid).pw_name
            self.groups = set(os.getgrouplist(name, gid))
        except KeyError:
            self.groups = {gid}

    def can(self, st, bit):  # bit: 4 read, 2 write, 1 execute/search
        if st.st_uid == self.uid:
            return bool(st.st_mode >> 6 & bit)
        if st.st_gid in self.groups:
            return bool(st.st_mode >> 3 & bit)
        return bool(st.st_mode & bit)


class Scan:
    def __init__(self, cfg):
        self.cfg = cfg
        self.ws = cfg["workspace"]
        self.exe = self.ws + "/executable"
        # the gold again, in a directory of root's (the worker's oracle that it cannot delete)
        self.reference = cfg.get("reference", "/reference/executable")
        self.gold = cfg["gold_sha256"]
        self.source_ext = frozenset(cfg["source_ext"])  # taskfoundry.syntax.languages.PROGRAM_SOURCE
        self.worker = Worker(cfg["worker_uid"], cfg["worker_gid"])
        self.owned = dpkg_owned()
        self.sources = cfg.get("source_hashes", {})
        self.allowed = cfg.get("allowed", {})  # path -> sha256 copied on purpose (test assets)
        self.gold_mode = cfg.get("gold_mode", 0o111)  # 0o755 for a source-visible (script) gold
        self.skip = SKIP_ROOTS + tuple(cfg.get("exclude", []))
        self.findings, self.notes, self.candidates, self.dir_files = [], [], [], []
        self.text_bytes, self.lock = 0, threading.Lock()
        # A pristine container (the base image plus one known layer) may read the base's
        # directories from a listing an earlier scan of the same base recorded: only the
        # directories the layer touches (its roots, their ancestors, all below a root) are
        # read live. Without "layer_roots" every directory is read live and none recorded.
        roots = cfg.get("layer_roots")
        listing = _load_listing(cfg.get("listing_in")) if roots is not None else {}
        # dirs: path -> [[name, mode, uid, gid, size]]; files: path -> [sha256, binary] (or nulls)
        self.listing, self.known = listing.get("dirs", {}), listing.get("files", {})
        self.recorded = {} if roots is not None and cfg.get("listing_out") else None
        self.recorded_files = {}
        self.touched = set(roots or [])
        for root in roots or []:
            while root not in ("/", ""):
                root = os.path.dirname(root)
                self.touched.add(root)
        self.under = tuple(r.rstrip("/") + "/" for r in roots or [])
        try:
            self.gold_size = os.stat(self.exe).st_size
        except OSError:
            self.gold_size = -1  # no file has this size: nothing to look for

    def add(self, path, kind, evidence):
        self.findings.append(finding(path, kind, evidence))

    # the walk ------------------------------------------------------------------
    def walk(self, threads=4):
        """Every directory the worker can search (an unsearchable one hides its subtree).
        Directories are read by a thread pool: on a cold overlay file system the walk waits
        on lookups, and the waits overlap."""
        with ThreadPoolExecutor(threads) as pool:
            pending = {pool.submit(self.scan_dir, "/", None)}
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    pending.update(pool.submit(self.scan_dir, *sub) for sub in future.result())
        self.findings.sort(key=lambda f: (f["path"], f["kind"]))
        self.candidates.sort()

    def scan_dir(self, folder, tree):
        """Check one directory's files; return its subdirectories the worker can enter,
        each with the flagged tree (build dir, .git) it is inside."""
        subdirs, files = [], 0
        entries = self.entries(folder)
        if entries is None:
            return subdirs
        for name, st in entries:
            full = os.path.join(folder, name)
            if full.startswith(self.skip):
                continue
            if stat.S_ISDIR(st.st_mode):
                if self.worker.can(st, 1):
                    subdirs.append((full, tree or self.check_dir(full, name)))
            elif stat.S_ISREG(st.st_mode):
                files += 1
                self.check_file(full, st, tree)
        self.dir_files.append(files)
        return subdirs

    def entries(self, folder):
        """(name, stat) of a directory's entries: from the base's listing when the layer
        leaves the directory alone, else read (and recorded for the listing when it is the
        base's). None when it cannot be read."""
        live = folder in self.touched or folder.startswith(self.under)
        if not live and folder in self.listing:
            return [(name, Stat(*fields)) for name, *fields in self.listing[folder]]
        out = []
        try:
            with os.scandir(folder) as found:
                for entry in found:
                    try:
                        out.append((entry.name, entry.stat(follow_symlinks=False)))
                    except OSError:
                        continue
        except OSError:
            return None
        if self.recorded is not None and not live:
            with self.lock:
                self.recorded[folder] = [
                    [name, st.st_mode, st.st_uid, st.st_gid, st.st_size] for name, st in out
                ]
                for name, st in out:  # filled in by check_content
                    if stat.S_ISREG(st.st_mode):
                        self.recorded_files[os.path.join(folder, name)] = [None, None]
        return out

    def write_listing(self):
        if self.recorded is None:
            return
        with open(self.cfg["listing_out"], "w", encoding="utf-8") as handle:
            files = {p: f for p, f in self.recorded_files.items() if f != [None, None]}
            json.dump({"dirs": self.recorded, "files": files}, handle)
        os.chmod(self.cfg["listing_out"], 0o600)

    def check_dir(self, full, name):
        """Flag a build tree, cache or foreign .git; returns the path when flagged."""
        if full in self.owned:
            return None
        if name == ".git":
            if full == self.ws + "/.git":
                return full  # checked with git; its files are not scanned one by one
            self.add(full, "foreign_git", "a .git other than the workspace's")
            return full
        parent = os.path.basename(os.path.dirname(full))
        kind = None
        if name in CACHE_DIRS or (name == "mod" and parent == "pkg"):
            kind = "build_cache"
        elif name in BUILD_DIRS and not (name == "__pycache__" and os.path.dirname(full) in self.owned):
            kind = "build_tree"
        if kind is None or not _nonempty(full):
            return None
        self.add(full, kind, f"{name}/ with {_count(full)} files")
        return full

    def check_file(self, path, st, tree):
        self.check_gold(path, st)
        if tree is not None or path in self.owned or _benign_pyc(path, self.owned) or path == self.exe:
            return
        if st.st_mode & (stat.S_ISUID | stat.S_ISGID) and self.worker.can(st, 1):
            self.add(path, "setuid", f"unpackaged set-id file, mode {oct(st.st_mode & 0o7777)}")
        if not self.worker.can(st, 4):
            return
        self.check_name(path)
        self.check_content(path, st)

    def check_gold(self, path, st):
        if path in (self.exe, self.reference) or st.st_size != self.gold_size:
            return
        try:
            same = sha256(path) == self.gold
        except OSError:
            return
        if same and self.worker.can(st, 4):
            self.add(path, "binary_copy", "readable file with the gold executable's sha256")
        elif same and self.worker.can(st, 1):
            self.add(path, "binary_copy", "execute-only copy of the gold (survives eval's deletion)")

    def check_name(self, path):
        name = os.path.basename(path)
        ext = os.path.splitext(name)[1]
        if ext in self.source_ext:
            self.add(path, "source_file", f"extension {ext}")
        elif ext in ARTIFACT_EXT:
            self.add(path, "build_artifact", f"extension {ext}")
        if name == ".git":
            self.add(path, "foreign_git", "a .git file (a pointer to another repository)")
        if name in BUILD_FILES:
            self.add(path, "build_file", f"build file {name}")
        if TEST_NAME.match(name) or "/eval/tests/" in path:
            self.add(path, "hidden_test", "test file name")

    def check_content(self, path, st):
        size = st.st_size
        captured = path.startswith(self.cfg["captured_dir"])  # --help output: tests may expect it
        known = self.known.get(path) if isinstance(st, Stat) else None  # [sha256, binary]
        fact = self.recorded_files.get(path) if self.recorded is not None else None
        if self.sources and not captured and MIN_HASH_BYTES <= size <= self.cfg["max_hash_bytes"]:
            digest = known[0] if known and known[0] else _sha_or_none(path)
            if fact is not None:
                fact[0] = digest
            match = self.sources.get(digest)
            if match and self.allowed.get(path) != digest:
                self.add(path, match[0], f"same content as {match[1]} in the source")
        ext = os.path.splitext(path)[1]
        if (
            ext in self.source_ext
            or path.startswith(SYSTEM_STATE)
            or size == 0
            or size > self.cfg["max_text_bytes"]
        ):
            return
        if known and known[1] is not None:
            binary = known[1]
        else:
            try:
                with open(path, "rb") as handle:
                    binary = b"\x00" in handle.read(8192)
            except OSError:
                return
            if fact is not None:
                fact[1] = binary
        if binary:
            return
        with self.lock:
            if self.text_bytes + size > self.cfg["max_total_text_bytes"]:
                self.notes.append(f"text budget spent: {path} not parsed")
                return
            self.candidates.append(path)
            self.text_bytes += size

    # the workspace --------------------------------------------------------------
    def check_workspace(self):
        try:
            st = os.stat(self.exe)
        except OSError as exc:
            self.add(self.exe, "executable_missing", str(exc))
            return
        self.check_gold_mode(self.exe, st, "the gold")
        if st.st_uid == self.worker.uid:
            self.add(self.exe, "executable_owner", "the worker owns the gold (chmod makes it readable)")
        if self.gold and sha256(self.exe) != self.gold:
            self.notes.append("the workspace executable is not the gold named to the scan")
        self.check_reference()

    def check_gold_mode(self, path, st, what):
        """A copy of the gold has the gold's mode, and the worker cannot read an execute-only one."""
        if stat.S_IMODE(st.st_mode) != self.gold_mode:
            self.add(path, "executable_mode", oct(stat.S_IMODE(st.st_mode)))
        if self.worker.can(st, 4) and self.gold_mode & 0o444 != 0o444:
            self.add(path, "binary_copy", f"{what} is readable by the worker")

    def check_reference(self):
        """The reference copy, when there is one: the gold's mode, and nothing of it or its
        directory the worker could change."""
        try:
            st, parent = os.stat(self.reference), os.stat(os.path.dirname(self.reference))
        except OSError:
            return  # an older cleanroom: no reference copy
        self.check_gold_mode(self.reference, st, "the reference copy")
        if self.worker.uid in (st.st_uid, parent.st_uid) or self.worker.can(parent, 2):
            self.add(self.reference, "executable_owner", "the worker can replace the reference copy")
        if self.gold and sha256(self.reference) != self.gold:
            self.add(self.reference, "executable_mismatch", "the reference copy is not the gold")

    def git(self, *args):
        cmd = ["git", "--no-optional-locks", "-c", "safe.directory=*", "-C", self.ws, *args]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        return res.returncode, res.stdout.strip()

    def check_git(self):
        where = self.ws + "/.git"
        if not os.path.isdir(where):
            self.add(where, "git_missing", "no fresh git repository in the workspace")
            return
        code, count = self.git("rev-list", "--all", "--count")
        if code != 0 or count != "1":
            self.add(where, "git_history", f"commits: {count or 'none'}")
        _, people = self.git("log", "--all", "--format=%an <%ae>%n%cn <%ce>")
        anon = f"{self.cfg['anonymous_name']} <{self.cfg['anonymous_email']}>"
        for who in sorted(set(people.splitlines()) - {anon}):
            self.add(where, "git_author", f"named author or committer: {who}")
        _, remotes = self.git("remote", "-v")
        if remotes:
            self.add(where, "git_remote", remotes.splitlines()[0])
        if os.path.exists(where + "/objects/info/alternates"):
            self.add(where + "/objects/info/alternates", "git_objects", "borrows another repo's objects")
        _, stored = self.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
        _, reachable = self.git("rev-list", "--objects", "--all")
        extra = set(stored.split()) - {line.split()[0] for line in reachable.splitlines() if line}
        if extra:
            self.add(where, "git_objects", f"{len(extra)} objects no commit reaches")
        _, dirty = self.git("status", "--porcelain")
        if dirty:
            self.add(where, "git_worktree", "commit differs from the files: " + dirty[:200])

    # hardening ------------------------------------------------------------------
    def is_gold(self, path):
        real = os.path.realpath(path)
        if real == self.exe:
            return True
        try:
            st = os.stat(real)
            return stat.S_ISREG(st.st_mode) and st.st_size == self.gold_size and sha256(real) == self.gold
        except OSError:
            return False

    def check_path(self):
        home = pwd.getpwuid(self.worker.uid).pw_dir if self._has_user() else "/nonexistent"
        dirs = os.environ.get("PATH", "").split(":") + [home + "/bin", home + "/.local/bin"]
        for folder in sorted(set(d for d in dirs if d and os.path.isdir(d))):
            for name in sorted(os.listdir(folder)):
                path = os.path.join(folder, name)
                if self.is_gold(path):
                    self.add(path, "gold_on_path", f"runs the gold: {os.path.realpath(path)}")
                elif path not in self.owned and _mentions(path, self.exe):
                    self.add(path, "gold_on_path", f"a wrapper that names {self.exe}")

    def _has_user(self):
        try:
            pwd.getpwuid(self.worker.uid)
            return True
        except KeyError:
            return False

    def check_preload(self):
        preload = os.environ.get("LD_PRELOAD", "").split()
        if os.path.exists("/etc/ld.so.preload"):
            with open("/etc/ld.so.preload", encoding="utf-8", errors="replace") as handle:
                preload += handle.read().split()
        for entry in preload:
            kind = "gold_preload" if self.is_gold(entry) else "ld_preload"
            self.add(entry, kind, "preloaded into every process (/etc/ld.so.preload or LD_PRELOAD)")

    def check_root_login(self):
        try:
            with open("/etc/shadow", encoding="utf-8") as handle:
                root = next((ln.split(":") for ln in handle if ln.startswith("root:")), None)
        except OSError:
            return
        if root is not None and len(root) > 1 and root[1] == "":
            self.add("/etc/shadow", "root_login", "root has an empty password (su works)")

    def check_proc(self):
        cmd = [sys.executable, os.path.abspath(__file__), "--proc"]
        res = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            check=False,
            user=self.worker.uid,
            group=self.worker.gid,
            extra_groups=sorted(self.worker.groups),
        )
        if res.returncode != 0:
            self.notes.append("the /proc check failed: " + res.stderr[-300:])
            return
        self.findings += json.loads(res.stdout)

    def write_candidates(self):
        with tarfile.open(self.cfg["out_tar"], "w") as tar:
            for path in self.candidates:
                try:
                    tar.add(path, arcname=path.lstrip("/"), recursive=False)
                except OSError as exc:
                    self.notes.append(f"could not read {path}: {exc}")
        os.chmod(self.cfg["out_tar"], 0o600)


def proc_check():
    """As the worker: other users' processes must not show their environment, memory maps,
    open files or executable."""
    out, me = [], os.getuid()
    for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if os.stat(f"/proc/{pid}").st_uid == me:
                continue
        except OSError:
            continue
        for entry, probe in (
            ("environ", _read),
            ("maps", _read),
            ("fd", os.listdir),
            ("exe", os.readlink),
            ("cwd", os.readlink),
        ):
            try:
                probe(f"/proc/{pid}/{entry}")
            except OSError:
                continue
            out.append(
                finding(
                    f"/proc/{pid}/{entry}", "proc_readable", "another user's process is open to the worker"
                )
            )
    return out


def _read(path):
    with open(path, "rb") as handle:
        return handle.read(1)


def _nonempty(path):
    try:
        with os.scandir(path) as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def _count(path):
    return sum(len(files) for _, _, files in os.walk(path))


def _benign_pyc(path, owned):
    """A .pyc that Debian's py3compile made for a packaged .py (its source is the package's)."""
    if not path.endswith(".pyc") or "/__pycache__/" not in path:
        return False
    folder, name = os.path.split(path)
    return os.path.join(os.path.dirname(folder), name.split(".")[0] + ".py") in owned


def _sha_or_none(path):
    try:
        return sha256(path)
    except OSError:
        return None


def _mentions(path, needle):
    try:
        with open(path, "rb") as handle:
            return needle.encode() in handle.read(65536)
    except OSError:
        return False


def main():
    if sys.argv[1:] == ["--proc"]:
        json.dump(proc_check(), sys.stdout)
        return
    with open(sys.argv[1], encoding="utf-8") as handle:
        scan = Scan(json.load(handle))
    scan.walk()
    scan.check_workspace()
    scan.check_git()
    scan.check_path()
    scan.check_preload()
    scan.check_root_login()
    scan.check_proc()
    scan.write_candidates()
    scan.write_listing()
    with open(scan.cfg["out_json"], "w", encoding="utf-8") as handle:
        json.dump(
            {
                "findings": scan.findings,
                "candidates": len(scan.candidates),
                "files": sum(scan.dir_files),
                "notes": scan.notes,
            },
            handle,
        )


if __name__ == "__main__":
    main()
