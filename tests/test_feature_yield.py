"""Regression tests for the feature kind's yield: packages whose reference failed its own grading."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from taskfoundry.assets.feature import feature_unshadow


def _touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_unshadow_leaves_the_standard_librarys_submodule_named_like_the_project(tmp_path: Path) -> None:
    """parse's start image lost urllib/parse.py (every `parse.py` under /usr was removed as a copy
    of the project `parse`): its grader's boot failed with `No module named 'urllib.parse'`."""
    stdlib, site = tmp_path / "lib" / "python3.13", tmp_path / "venv" / "site-packages"
    keep = [
        _touch(stdlib / "urllib" / "parse.py"),
        _touch(site / "other" / "parse.py"),
        _touch(site / "other" / "parse" / "__init__.py"),
    ]
    gone = [
        _touch(site / "parse.py"),
        _touch(site / "parse" / "__init__.py"),
        _touch(site / "pip" / "_vendor" / "parse.py"),
        _touch(stdlib / "parse.cpython-313-x86_64-linux-gnu.so"),
    ]
    roots = [str(stdlib), str(site)]
    found = feature_unshadow.copies(["parse"], roots, roots)
    assert found == sorted(str(p.resolve()) for p in [gone[0], site / "parse", gone[2], gone[3]])
    feature_unshadow.remove(found)
    assert all(p.exists() for p in keep) and not any(p.exists() for p in gone)


def test_unshadow_removes_a_wheel_holding_the_project(tmp_path: Path) -> None:
    import zipfile

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "parse-1.0-py3-none-any.whl", "w") as whl:
        whl.writestr("parse/__init__.py", "")
    with zipfile.ZipFile(wheels / "other-1.0-py3-none-any.whl", "w") as whl:
        whl.writestr("other/parse.py", "")
    found = feature_unshadow.copies(["parse"], [], [str(wheels)])
    assert found == [str((wheels / "parse-1.0-py3-none-any.whl").resolve())]


def test_unshadow_runs_as_the_start_images_command(tmp_path: Path) -> None:
    """The command the start image runs (`python -I -c SCRIPT TOPS`) works as a script."""
    from taskfoundry.assets import asset

    script = asset("feature/feature_unshadow.py").decode()
    done = subprocess.run([sys.executable, "-I", "-c", script, "no_such_top_xyz"], capture_output=True)
    assert done.returncode == 0, done.stderr
