"""Refresh with nothing listed discovers its candidates; `taskfoundry discover` end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from taskfoundry.cli import main
from taskfoundry.config import Config
from taskfoundry.discover.models import Discovery
from taskfoundry.flows.catalog import candidates
from taskfoundry.flows.refresh import choose_catalog

from discover_fakes import FakeRegistries, populate

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


@pytest.fixture
def fake() -> Iterator[FakeRegistries]:
    registries = FakeRegistries()
    populate(registries)
    yield registries
    registries.close()


def test_a_given_or_configured_catalog_is_not_replaced(fake: FakeRegistries, tmp_path: Path) -> None:
    config = fake.config(tmp_path / "out")
    assert choose_catalog(config, tmp_path / "c.yaml", NOW) == (
        tmp_path / "c.yaml",
        f"catalog {tmp_path / 'c.yaml'}",
    )
    data = config.model_dump()
    data["orchestration"]["refresh"]["sources"] = ["crate:x"]
    listed = Config.model_validate(data)
    assert choose_catalog(listed, None, NOW)[0] is None and not fake.hits


def test_refresh_without_a_catalog_discovers_in_a_window_then_since_the_last(
    fake: FakeRegistries, tmp_path: Path
) -> None:
    config = fake.config(tmp_path / "out", registries=["crates"])
    path, note = choose_catalog(config, None, NOW)
    assert path is not None and "in a 30-day window (no earlier refresh), since 2026-10-28" in note
    assert [e.source for e in candidates(config, path)] == ["crate:tool@1.0.0"]
    report = Discovery.model_validate_json(path.with_suffix(".json").read_text())
    assert {r.name for r in report.registries[0].rows} == {"tool", "libthing", "nopub"}
    (config.work_dir / "discover" / "last-refresh").write_text("2026-11-10T03:00:00+00:00\n")
    path, note = choose_catalog(config, None, NOW)
    assert "since the last refresh (2026-11-10 03:00), since 2026-11-10" in note
    assert path is not None and candidates(config, path) == []  # tool was released on 2026-11-05


def test_discover_command_writes_a_catalog_and_prints_counts(fake: FakeRegistries, tmp_path: Path) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(fake.config(tmp_path / "out").model_dump(mode="json")))
    args = [
        "discover",
        "--since",
        "2026-10-27",
        "--config",
        str(config_file),
        "--out",
        str(tmp_path / "c.yaml"),
    ]
    result = CliRunner().invoke(main, [*args, "--registry", "pypi,debian"])
    assert result.exit_code == 0, result.output
    assert (
        "pypi" in result.output
        and "debian:cprog=1.2-1" in result.output
        and "2 candidates written" in result.output
    )
    assert [e["source"] for e in yaml.safe_load((tmp_path / "c.yaml").read_text())] == [
        "pypi:clitool==1.0",
        "debian:cprog=1.2-1",
    ]
    result = CliRunner().invoke(main, [*args, "--format", "json", "--registry", "crates", "--limit", "0"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["registries"][0]["stopped"] == "limit of 0 candidates"
    result = CliRunner().invoke(main, [*args, "--registry", "npm"])
    assert result.exit_code == 1 and "unknown registry npm" in result.output


def test_refresh_command_says_it_discovered(
    fake: FakeRegistries, tmp_path: Path, prefect_harness: None
) -> None:
    """Nothing listed and nothing released in the window: discovery, an empty refresh, a stamp."""
    config = fake.config(tmp_path / "out", registries=["debian"], seeds={"debian": ["oldprog"]}, limit=0)
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")))
    result = CliRunner().invoke(main, ["refresh", "--config", str(config_file), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert (
        "refresh: discovery: 0 candidates released in a 30-day window (no earlier refresh)" in result.output
    )
    assert (config.work_dir / "discover" / "last-refresh").exists()


def test_discover_without_an_out_folder_writes_none_and_says_a_spent_budget_is_not_the_end(
    fake: FakeRegistries, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 59: a cache under ./out nobody asked for, and a stop at the budget that read as the end."""
    data = fake.config(tmp_path / "unused").model_dump(mode="json")
    del data["out"], data["sources"]["cache_dir"]  # no OUT folder named, no cache: the user's cache
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(data))
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setattr("taskfoundry.discover.cli.USER_CACHE", tmp_path / "user-cache")
    args = ["discover", "--since", "2026-10-27", "--config", str(config_file), "--registry", "pypi"]
    result = CliRunner().invoke(main, [*args, "--max-requests", "1"])
    assert result.exit_code == 0, result.output
    assert "request budget of 1 spent: answers are cached, so another run" in result.output
    assert list(here.iterdir()) == [] and any((tmp_path / "user-cache").rglob("*"))
