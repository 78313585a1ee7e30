"""Resume by content: what the stage cache key sees, and a cached result that went stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prefect import flow, task

from taskfoundry.cleanroom.leakscan import LeakReport
from taskfoundry.config import Config
from taskfoundry.flows import tasks as flow_tasks
from taskfoundry.flows.cache import STAGE_CACHE, StageInputs, stale_reason
from taskfoundry.flows.tasks import StageLog, run_stage
from taskfoundry.models import CoverageReport
from taskfoundry.pipeline.results import CleanroomStage, GenerateStage


def _key(**inputs: Any) -> str | None:
    return StageInputs().compute_key(None, inputs, {})  # type: ignore[arg-type]


def test_orchestration_settings_do_not_change_the_key() -> None:
    base = Config(out=Path("/o"))
    busy = base.model_copy(
        update={
            "orchestration": base.orchestration.model_copy(
                update={"concurrency": 7, "max_failures": 0.5, "resume": False}
            )
        }
    )
    assert _key(config=base) == _key(config=busy)


def test_what_is_built_changes_the_key() -> None:
    base = Config(out=Path("/o"))
    assert _key(config=base) != _key(config=base.model_copy(update={"out": Path("/other")}))
    probes = base.model_copy(update={"explorer": base.explorer.model_copy(update={"max_probes": 9})})
    assert _key(config=base) != _key(config=probes)
    assert _key(config=base, x=1) != _key(config=base, x=2)


def _clean(image: str) -> CleanroomStage:
    return CleanroomStage(
        image=image, built=True, usage={}, leak=LeakReport(image=image, verdict="clean", findings=[])
    )


def test_stale_reason_names_a_missing_image_or_suite(tmp_path: Path) -> None:
    assert stale_reason(_clean("a:1"), lambda tag: True) is None
    assert stale_reason(_clean("a:1"), lambda tag: False) == "image a:1 is gone"
    gen = GenerateStage(
        branch="b",
        suite=tmp_path / "suite",
        tests=[],
        generated=0,
        probes_run=0,
        exhausted=None,
        coverage=CoverageReport.from_lines({}, {}),
    )
    assert stale_reason(gen, lambda tag: True) == f"{tmp_path / 'suite' / 'eval' / 'tests'} is gone"
    (tmp_path / "suite" / "eval" / "tests").mkdir(parents=True)
    assert stale_reason(gen, lambda tag: True) is None
    assert stale_reason("not a stage result", lambda tag: False) is None


CALLS: list[str] = []


@task(name="fake-cleanroom", cache_policy=STAGE_CACHE, persist_result=True)
def fake_cleanroom(image: str, config: Config) -> CleanroomStage:
    CALLS.append(image)
    return _clean(image)


BUILT: list[bool] = []


@flow(name="fake-build")
def fake_flow(config: Config) -> dict[str, bool]:
    stage_log = StageLog.start("fake")
    BUILT.append(run_stage(stage_log, config, fake_cleanroom, "fake:1", config).built)
    return stage_log.cached


def test_a_cached_stage_whose_image_is_gone_runs_again(
    tmp_path: Path, prefect_harness: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config(out=tmp_path / "out")
    present = {"fake:1"}
    monkeypatch.setattr(flow_tasks, "_image_exists", lambda tag: tag in present)
    CALLS.clear()
    BUILT.clear()
    assert fake_flow(config) == {"fake-cleanroom": False}
    assert fake_flow(config) == {"fake-cleanroom": True} and CALLS == ["fake:1"]
    assert BUILT == [True, False]  # a cached result says this run built no image
    present.clear()  # `docker rmi`
    assert fake_flow(config) == {"fake-cleanroom": False} and CALLS == ["fake:1", "fake:1"]
    present.add("fake:1")
    assert fake_flow(config) == {"fake-cleanroom": True} and len(CALLS) == 2


def test_fresh_runs_every_stage_but_still_persists(
    tmp_path: Path, prefect_harness: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config(out=tmp_path / "out")
    fresh = config.model_copy(
        update={"orchestration": config.orchestration.model_copy(update={"resume": False})}
    )
    monkeypatch.setattr(flow_tasks, "_image_exists", lambda tag: True)
    CALLS.clear()
    assert fake_flow(fresh) == {"fake-cleanroom": False}
    assert fake_flow(fresh) == {"fake-cleanroom": False} and len(CALLS) == 2
    assert fake_flow(config) == {"fake-cleanroom": True} and len(CALLS) == 2
    assert any((tmp_path / "out" / "work" / "results").iterdir())


def test_the_built_flag_is_not_part_of_the_key() -> None:
    assert _key(clean=_clean("a:1")) == _key(clean=_clean("a:1").model_copy(update={"built": False}))
    assert _key(clean=_clean("a:1")) != _key(clean=_clean("a:2"))
