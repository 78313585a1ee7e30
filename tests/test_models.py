from datetime import UTC, datetime
from pathlib import Path

import pytest

from taskfoundry.errors import ConfigError
from taskfoundry.models import (
    Branch,
    CoverageReport,
    DropRecord,
    IgnoredTest,
    Images,
    TaskYaml,
    TestsJson,
    branch_key,
    load_json_model,
    load_yaml_model,
    save_json,
    save_yaml,
)


def _task() -> TaskYaml:
    return TaskYaml(
        repository="o/r",
        commit="a" * 40,
        language="c",
        difficulty="easy",
        eval_clean_hashes=["b" * 64],
        task_id="o__r.aaaaaaa",
        difficulty_score=1.2,
        source="/x",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        executable="r",
        images=Images(task="ns/o_1776_r.aaaaaaa:task", task_cleanroom="ns/o_1776_r.aaaaaaa:task_cleanroom"),
    )


def test_task_yaml_round_trip(tmp_path: Path) -> None:
    save_yaml(tmp_path / "task.yaml", _task())
    assert load_yaml_model(tmp_path / "task.yaml", TaskYaml) == _task()


def test_tests_json_round_trip(tmp_path: Path) -> None:
    rec = DropRecord(id="dummy_pass", timestamp=datetime(2026, 1, 1, tzinfo=UTC), detail="silent")
    ignored = [IgnoredTest(name="eval.tests.test_a.test_y", reasons=[rec])]
    branch = Branch(tests=["eval.tests.test_a.test_x"], ignored_tests=ignored)
    tests = TestsJson(branches={branch_key("b"): branch})
    save_json(tmp_path / "tests.json", tests)
    assert load_json_model(tmp_path / "tests.json", TestsJson) == tests


def test_branch_key_is_sha256_prefix() -> None:
    assert branch_key("explorer-seed0") == "32f92265c3f2"
    assert len(branch_key("x")) == 12 and branch_key("x") != branch_key("y")


def test_malformed_task_file_names_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "task.yaml").write_text("repository: o/r\ncommit: 3\n")
    with pytest.raises(ConfigError, match=r"(?s)task\.yaml.*language"):
        load_yaml_model(tmp_path / "task.yaml", TaskYaml)


def test_coverage_report_from_lines() -> None:
    rep = CoverageReport.from_lines({"a.c": {1, 2}}, {"a.c": {1, 2, 3, 4}, "b.c": {1}})
    assert rep.lines_covered == 2 and rep.lines_total == 5
    assert rep.line_rate == pytest.approx(0.4)
    assert rep.files["a.c"].missed == [3, 4] and rep.files["b.c"].covered == []
