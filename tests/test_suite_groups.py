"""The suite's own grouping for two xdist workers (tests/conftest.py): a task that conftest builds
once per session is built once per run only while every module using it is in one group."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, module_group

TESTS = Path(__file__).resolve().parent
# conftest's session fixtures that build whole tasks (minutes each), one task per fixture
SESSION_BUILDS = ["function_tasks", "featlib_tasks"]


def _users(*words: str) -> set[str]:
    """Test modules (this one aside) whose text has every one of `words`."""
    found = set()
    for path in TESTS.glob("test_*.py"):
        text = path.read_text()
        if path != Path(__file__) and all(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text) for w in words):
            found.add(path.stem)
    return found


def _groups(modules: set[str]) -> dict[str, str]:
    return {module: module_group(f"tests/{module}.py::test") for module in modules}


@pytest.mark.parametrize("fixture", SESSION_BUILDS)
def test_each_session_build_is_used_by_one_group(fixture: str) -> None:
    groups = _groups(_users(fixture))
    assert groups and len(set(groups.values())) == 1, groups


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
def test_each_example_task_is_used_by_one_group(example: str) -> None:
    """`example_task` builds each example once per worker: the modules that ask for one (its
    name quoted beside `example_task`) share a group."""
    groups = _groups(_users("example_task", f'"{example}"'))
    assert len(set(groups.values())) <= 1, groups


def test_a_module_is_its_own_group_unless_it_shares_one() -> None:
    assert module_group("tests/test_models.py::test_x[a::b]") == "test_models"
    assert module_group("tests/test_e2e.py::test_x") == module_group("tests/test_eval_docker.py::test_y")
    assert module_group("tests/test_flows_docker.py::t") == module_group("tests/test_flows_worker.py::t")
