"""Small git helpers: run git, and snapshot a directory as one deterministic commit."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from taskfoundry.errors import SourceError

#: Author, committer and date of every snapshot commit, so equal trees give equal commits.
SNAPSHOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "taskfoundry",
    "GIT_AUTHOR_EMAIL": "taskfoundry@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "taskfoundry",
    "GIT_COMMITTER_EMAIL": "taskfoundry@localhost",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
# no user or system config: no signing, hooks, autocrlf or templates can change the commit
_CLEAN = [
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "core.fileMode=true",
    "-c",
    "safe.directory=*",
]


def git(
    args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, clean: bool = False
) -> str:
    """Run git; a failure is a source-stage error quoting git's message.

    `clean` ignores the user's and the system's git config (for snapshot commits).
    """
    full_env = {**os.environ, **(env or {})}
    if clean:
        full_env |= {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    prefix = _CLEAN if clean else []
    proc = subprocess.run(
        ["git", *prefix, *args], cwd=cwd, capture_output=True, text=True, check=False, env=full_env
    )
    if proc.returncode != 0:
        raise SourceError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def snapshot_commit(tree: Path, message: str) -> str:
    """`git init` `tree` and commit every file in it (ignored ones too); returns the commit.

    The author, committer and date are fixed, so the same files and message always
    give the same commit id.
    """
    git(["init", "--quiet", "--template="], cwd=tree, clean=True)
    git(["add", "--all", "--force", "."], cwd=tree, clean=True)
    git(
        ["commit", "--quiet", "--no-verify", "--allow-empty", "-m", message],
        cwd=tree,
        env=SNAPSHOT_IDENTITY,
        clean=True,
    )
    return git(["rev-parse", "HEAD"], cwd=tree, clean=True)


def toplevel(path: Path) -> Path | None:
    proc = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, text=True, check=False
    )
    return Path(proc.stdout.strip()).resolve() if proc.returncode == 0 else None


def mkdirs(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
