from pathlib import Path

import pytest

from taskfoundry.config import Config
from taskfoundry.errors import SourceError
from taskfoundry.sources import resolve_source

from conftest import EXAMPLES, make_repo


def test_local_subdirectory_is_pinned_by_tree_hash(tmp_path: Path) -> None:
    first = resolve_source(str(EXAMPLES / "csvq"), tmp_path)
    again = resolve_source(str(EXAMPLES / "csvq"), tmp_path)
    assert first.task_id == again.task_id and first.task_id.startswith("local__csvq.")
    assert (first.path / "Makefile").exists() and not (first.path / ".git").exists()


def test_a_relative_out_is_the_callers_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkout runs git in other folders: a relative `out` from the Python API named a
    path git could not open."""
    monkeypatch.chdir(tmp_path)
    config = Config(out=Path("rel"))
    assert config.out == tmp_path.resolve() / "rel"
    co = resolve_source(str(EXAMPLES / "csvq"), config.work_dir / "sources")
    assert co.path.is_relative_to(tmp_path.resolve() / "rel") and (co.path / "Makefile").is_file()


def test_git_url_clone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "upstream" / "acme" / "tool", {"main.c": "int main(){return 0;}\n"})
    co = resolve_source(f"file://{repo}", tmp_path / "work")
    assert (co.owner, co.repo) == ("acme", "tool")
    assert len(co.commit) == 40 and co.task_id == f"acme__tool.{co.commit[:7]}"
    assert (co.path / "main.c").exists()


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a directory"):
        resolve_source(str(tmp_path / "nope"), tmp_path)


def test_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(SourceError, match="not inside a git repository"):
        resolve_source(str(tmp_path / "plain"), tmp_path / "w")


def test_bad_git_url(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="^git clone"):
        resolve_source(f"file://{tmp_path}/missing.git", tmp_path)


def test_snapshot_commit_is_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from taskfoundry.sources.gitrepo import snapshot_commit

    commits = []
    for i, who in enumerate(("alice", "bob")):
        monkeypatch.setenv("GIT_AUTHOR_NAME", who)
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"2020-01-0{i + 1}T00:00:00+0000")
        tree = tmp_path / f"t{i}"
        (tree / "sub").mkdir(parents=True)
        (tree / "sub" / "a.c").write_text("int x;\n")
        (tree / ".gitignore").write_text("*.c\n")  # ignored files are committed too
        (tree / "run.sh").write_text("#!/bin/sh\n")
        (tree / "run.sh").chmod(0o755)
        commits.append(snapshot_commit(tree, "pypi:x 1.0\n"))
    assert commits[0] == commits[1]
    assert "sub/a.c" in _ls(tmp_path / "t0")


def _ls(repo: Path) -> str:
    import subprocess

    return subprocess.run(
        ["git", "-c", "safe.directory=*", "ls-files"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
