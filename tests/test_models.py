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


def _models_under(model: type, seen: set[type]) -> set[type]:
    """`model` and every model its fields hold (in lists, dicts and unions too)."""
    import inspect
    import typing

    from pydantic import BaseModel

    if model in seen:
        return seen
    seen.add(model)
    for field in model.model_fields.values():  # type: ignore[attr-defined]
        stack = [field.annotation]
        while stack:
            kind = stack.pop()
            stack.extend(typing.get_args(kind))
            if inspect.isclass(kind) and issubclass(kind, BaseModel):
                _models_under(kind, seen)
    return seen


def test_every_config_section_refuses_a_key_it_does_not_know(tmp_path: Path) -> None:
    """`explorer: {max_probs: 800}` ran a whole build on the defaults (issue 59): every section,
    however deep, names a misspelt key, with its file and section."""
    from taskfoundry.config import Config, load_config

    sections = _models_under(Config, set())
    assert len(sections) > 20
    lax = sorted(m.__name__ for m in sections if m.model_config.get("extra") != "forbid")  # type: ignore[attr-defined]
    assert lax == []
    typo = tmp_path / "typo.yaml"
    typo.write_text("explorer: {max_probs: 800}\nfilter: {gold_run: 5}\nsources: {debian: {suit: sid}}\n")
    with pytest.raises(ConfigError) as found:
        load_config(typo)
    for where in (str(typo), "explorer.max_probs", "filter.gold_run", "sources.debian.suit"):
        assert where in str(found.value)
