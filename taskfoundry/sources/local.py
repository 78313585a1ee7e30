"""A local path as a source: a git work tree, or a directory inside one (its committed files)."""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from pathlib import Path

from taskfoundry.errors import SourceError
from taskfoundry.sources.checkout import Checkout, slug
from taskfoundry.sources.gitrepo import git, mkdirs, toplevel


def fetch(source: str, workdir: Path) -> Checkout:
    """The committed files at HEAD of `source`'s directory, exported under `workdir`.

    A subdirectory is pinned by its tree hash, so the task id changes exactly
    when the committed files of that directory change.
    """
    path = Path(source)
    top, spec, commit = check(source)
    name = slug(path.resolve().name)
    final = workdir / "sources" / f"local__{name}.{commit[:12]}"
    if not final.exists():
        _export_tree(top, spec, final)
    return Checkout(final, "local", name, commit, str(path.resolve()))


def check(source: str) -> tuple[Path, str, str]:
    """(work tree's top, tree spec, commit) of `source`; a SourceError when it has none."""
    path = Path(source)
    if not path.is_dir():
        raise SourceError(f"{source}: not a directory")
    top = toplevel(path)
    if top is None:
        raise SourceError(f"{source}: not inside a git repository (commit it first)")
    rel = path.resolve().relative_to(top).as_posix()
    spec = f"HEAD:{rel}" if rel != "." else "HEAD^{tree}"
    try:
        commit = git(["rev-parse", spec], cwd=top)
    except SourceError as exc:
        raise SourceError(f"{source}: no committed files ({exc.message})") from exc
    return top, spec, commit


def _export_tree(top: Path, spec: str, final: Path) -> None:
    """`git archive` the tree into `final`, atomically."""
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=mkdirs(final.parent)))
    try:
        archive = tmp / "tree.tar"
        git(["archive", "--format=tar", "-o", str(archive), spec], cwd=top)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp / "tree", filter="tar")
        (tmp / "tree").rename(final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
