"""Resume by content: what the stage cache key sees, and a cached result that went stale."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from prefect import flow, task

from taskfoundry import sections
from taskfoundry.builders.recipe import Recipe
from taskfoundry.config import Config
from taskfoundry.flows import build as flow_build
from taskfoundry.flows import tasks as flow_tasks
from taskfoundry.flows.cache import StageCode, StageInputs, stage_cache, stale_reason, upto
from taskfoundry.flows.codegraph import closure_hash, module_files, uses_graph
from taskfoundry.flows.tasks import BUILD, StageLog, kind_pipeline, kind_tasks, run_stage
from taskfoundry.kinds import registry
from taskfoundry.kinds.program.cleanroom.leakscan import LeakReport
from taskfoundry.kinds.program.kind import ProgramKind
from taskfoundry.kinds.program.results import CleanroomStage, FilterStage, GenerateStage, LintStage
from taskfoundry.kinds.program.settings import CleanroomSettings, GenerateSettings
from taskfoundry.models import CoverageReport
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.store import LOCAL_ENV


def _key(**inputs: Any) -> str | None:
    return StageInputs().compute_key(None, inputs, {})  # type: ignore[arg-type]


SECTIONS = (
    sections.for_build,
    sections.for_cleanroom,
    sections.for_generate,
    sections.for_filter,
    sections.for_mutate,
)
PIPELINE = kind_pipeline(ProgramKind())
MODULE = {"build": BUILD, **{stage.name: stage.module for stage in ProgramKind.stages.values()}}


def test_orchestration_settings_are_in_no_stage_section() -> None:
    base = Config(out=Path("/o"))
    busy = base.model_copy(
        update={
            "orchestration": base.orchestration.model_copy(
                update={"concurrency": 7, "max_failures": 0.5, "resume": False}
            )
        }
    )
    for section in SECTIONS:
        assert _key(settings=section(base)) == _key(settings=section(busy))


def test_a_stage_is_keyed_on_its_own_section() -> None:
    base = Config(out=Path("/o"))
    seeded = base.model_copy(update={"explorer": base.explorer.model_copy(update={"seed": 9})})
    unchanged = [_key(settings=s(base)) == _key(settings=s(seeded)) for s in SECTIONS]
    # build, cleanroom, generate, filter, mutation (guided generation runs the explorer again)
    assert unchanged == [True, True, False, True, False]
    budget = base.model_copy(update={"mutation": base.mutation.model_copy(update={"budget": 5})})
    moved = [_key(settings=s(base)) != _key(settings=s(budget)) for s in SECTIONS]
    assert moved == [False, False, False, False, True]  # only the mutation stage reads it
    harness = base.model_copy(update={"eval": base.eval.model_copy(update={"program_uid": 3000})})
    moved = [_key(settings=s(base)) != _key(settings=s(harness)) for s in SECTIONS]
    assert moved == [False, False, False, True, True]  # the suite runs as the harness runs it
    other_out = base.model_copy(update={"out": Path("/other")})
    assert all(_key(settings=s(base)) != _key(settings=s(other_out)) for s in SECTIONS[:3])
    timeout = base.model_copy(update={"explorer": base.explorer.model_copy(update={"probe_timeout": 9})})
    assert _key(settings=sections.for_cleanroom(base)) != _key(settings=sections.for_cleanroom(timeout))
    # the agent's section is not read by the explorer, so it is not in the explorer's key
    budget = base.model_copy(update={"agent": base.agent.model_copy(update={"suite_timeout": 1})})
    assert sections.for_generate(base) == sections.for_generate(budget)
    assert sections.for_mutate(base) == sections.for_mutate(budget)
    # with the agent, the mutation stage runs it again (the survivors as a revision request)
    agent = base.model_copy(update={"generator": "agent"})
    agent_budget = agent.model_copy(update={"agent": budget.agent})
    assert _key(settings=sections.for_mutate(agent)) != _key(settings=sections.for_mutate(agent_budget))
    assert _key(x=1) != _key(x=2)


@functools.cache
def _graph() -> tuple[dict[str, frozenset[str]], dict[str, Path]]:
    """The package's uses graph, parsed once for the module: an edit here appends a comment, which
    moves no arrow (parsing the package took 2 s of a core, 30 times; issue 57)."""
    return uses_graph(), module_files()


@functools.cache
def _code_keys(edited: str | None) -> dict[str, str]:
    graph, files = _graph()

    def read(name: str) -> bytes:
        return files[name].read_bytes() + (b"\n# edited\n" if name == edited else b"")

    return {stage: closure_hash(upto(PIPELINE, stage), graph, read) for stage in PIPELINE}


@pytest.mark.parametrize(
    ("edited", "first_invalid"),
    [
        ("taskfoundry.pipeline.build", "build"),
        ("taskfoundry.builders.detect_c", "build"),
        ("taskfoundry.kinds.program.cleanroom.stage", "cleanroom"),
        ("taskfoundry.kinds.program.cleanroom.leakscan", "cleanroom"),
        ("taskfoundry.kinds.program.testgen.help", "cleanroom"),  # the cleanroom captures the help text
        ("taskfoundry.kinds.program.testgen.stage", "generate"),
        ("taskfoundry.kinds.program.testgen.explorer", "generate"),
        ("taskfoundry.kinds.program.testgen.writer", "generate"),  # reached through the generators' registry
        ("taskfoundry.kinds.program.lint", "lint"),
        ("taskfoundry.kinds.program.filter.stage", "filter"),
        ("taskfoundry.kinds.program.filter.run", "filter"),
        ("taskfoundry.kinds.program.mutate.stage", "mutation"),
        ("taskfoundry.kinds.program.mutate.worker", "mutation"),
        ("taskfoundry.mutation.operators", "mutation"),
    ],
)
def test_editing_code_invalidates_its_stage_and_the_ones_after(edited: str, first_invalid: str) -> None:
    base, changed = _code_keys(None), _code_keys(edited)
    first = PIPELINE.index(MODULE[first_invalid])
    assert [base[s] != changed[s] for s in PIPELINE] == [i >= first for i in range(len(PIPELINE))]


def test_every_persisted_stage_task_is_keyed_on_its_code() -> None:
    tasks = [flow_tasks.build_task, *kind_tasks(ProgramKind()).in_order()]
    assert [t.name for t in tasks] == ["build", "cleanroom", "generate", "lint", "filter", "mutation"]
    for i, task_ in enumerate(tasks):
        policies = getattr(task_.cache_policy, "policies", [])
        assert StageCode(modules=PIPELINE[: i + 1]) in policies, task_.name


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


@task(name="fake-cleanroom", cache_policy=stage_cache(PIPELINE, PIPELINE[1]), persist_result=True)
def fake_cleanroom(image: str, settings: CleanroomSettings) -> CleanroomStage:
    CALLS.append(image)
    return _clean(image)


BUILT: list[bool] = []


@flow(name="fake-build")
def fake_flow(config: Config) -> dict[str, bool]:
    stage_log = StageLog.start("fake")
    settings = sections.for_cleanroom(config)
    BUILT.append(run_stage(stage_log, config, fake_cleanroom, "fake:1", settings).built)
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


RAN: list[str] = []


def _record(name: str, result: Any) -> Any:
    RAN.append(name)
    return result


class FakeProgramKind:
    """The program kind's stages (names, modules, sections) over parts that only record their call."""

    name = "fake-program"
    stages = ProgramKind.stages
    builds_program = True

    def start_state(self, src: Any, build: Any, settings: Any, client: Any) -> CleanroomStage:
        return _record("cleanroom", _clean("c:1"))

    def generate(
        self, src: Any, build: Any, start: Any, settings: GenerateSettings, client: Any
    ) -> GenerateStage:
        branch = f"explorer-seed{settings.generator.explorer.seed}"  # as the explorer names it
        suite = settings.names(src).suite_dir(branch)
        (suite / "eval" / "tests").mkdir(parents=True, exist_ok=True)
        empty = CoverageReport.from_lines({}, {})
        gen = GenerateStage(
            branch=branch, suite=suite, tests=[], generated=0, probes_run=0, exhausted=None, coverage=empty
        )
        return _record("generate", gen)

    def review(self, suite: Any) -> LintStage:
        return _record("lint", LintStage(dropped={}, findings=0, high=0, report={}))

    def validate(self, suite: Any, review: Any, start: Any, settings: Any, client: Any) -> FilterStage:
        empty = CoverageReport.from_lines({}, {})
        return _record("filter", FilterStage(kept=[], dropped={}, dummy_pass_rate=0.0, coverage=empty))

    def strengthen(
        self, src: Any, build: Any, start: Any, suite: Any, review: Any, verdict: Any, *rest: Any
    ) -> Any:
        return _record("mutation", (suite, verdict))

    def package(self, *args: Any) -> list[Path]:
        return _record("package", [Path("task")])


def _fake_stages(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The real flow wiring (`build_stages`) and kind registry, over a kind that only records."""
    build = BuildStage(
        base_image="b:1",
        image="i:1",
        built=True,
        recipe=Recipe(
            kind="make", language="c", build=[], coverage_build=[], executable="x", coverage_executable="x"
        ),
        build_sh="",
        gold_sha256="0",
        log=tmp_path / "log",
    )
    monkeypatch.setitem(registry.KINDS, FakeProgramKind.name, f"{__name__}:FakeProgramKind")
    monkeypatch.setitem(sections.CUTS, FakeProgramKind.name, sections.CUTS["program"])
    monkeypatch.setattr(flow_tasks, "build_stage", lambda *args: _record("build", build))
    monkeypatch.setattr(flow_tasks, "docker_client", lambda: None)
    monkeypatch.setattr(flow_tasks, "_image_exists", lambda tag: True)
    monkeypatch.setattr(flow_build, "publish_task", lambda *args: None)


@flow(name="fake-stages")
def stages_flow(src: SourceResult, config: Config) -> dict[str, bool]:
    stage_log = StageLog.start(src.source)
    flow_build.build_stages(src, config, stage_log)
    return stage_log.cached


def test_a_new_explorer_seed_reuses_the_build_and_the_cleanroom(
    tmp_path: Path, prefect_harness: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_stages(monkeypatch, tmp_path)
    src = SourceResult(
        path=tmp_path, owner="o", repo="r", commit="c" * 40, source="s", task_id="o__r.ccccccc"
    )
    config = Config(out=tmp_path / "out", kind=FakeProgramKind.name)
    RAN.clear()
    stages_flow(src, config)
    assert RAN == ["build", "cleanroom", "generate", "lint", "filter", "mutation", "package"]
    RAN.clear()
    seeded = config.model_copy(update={"explorer": config.explorer.model_copy(update={"seed": 1})})
    cached = stages_flow(src, seeded)
    assert RAN == ["generate", "lint", "filter", "mutation", "package"]
    assert cached == {
        "build": True,
        "cleanroom": True,
        "generate": False,
        "lint": False,
        "filter": False,
        "mutation": False,
        "package": False,
    }
    RAN.clear()
    budget = seeded.model_copy(update={"mutation": seeded.mutation.model_copy(update={"budget": 9})})
    stages_flow(src, budget)
    assert RAN == ["mutation", "package"]  # a new mutation budget re-runs only the mutation stage


def test_with_a_store_keys_are_the_same_whatever_the_workers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def key_on(worker: str, out: str) -> str | None:
        monkeypatch.setenv(LOCAL_ENV, str(tmp_path / worker))
        config = Config.model_validate({"out": out})
        src = SourceResult(
            path=config.work_dir / "sources" / "x",
            owner="o",
            repo="r",
            commit="c" * 40,
            source="s",
            task_id="o__r.c",
        )
        params = {"src": src, "settings": sections.for_build(config)}
        return StageInputs().compute_key(None, params, {"config": config})  # type: ignore[arg-type]

    assert key_on("w1", "s3://b/tf") == key_on("w2", "s3://b/tf")
    assert key_on("w1", str(tmp_path / "a")) != key_on("w1", str(tmp_path / "b"))  # local OUTs: as before


def test_with_a_store_a_directory_of_another_worker_is_stale(tmp_path: Path) -> None:
    suite = tmp_path / "w1" / "suite"
    (suite / "eval" / "tests").mkdir(parents=True)
    gen = GenerateStage(
        branch="b",
        suite=suite,
        tests=[],
        generated=0,
        probes_run=0,
        exhausted=None,
        coverage=CoverageReport.from_lines({}, {}),
    )
    assert stale_reason(gen, lambda tag: True, tmp_path / "w1") is None
    assert "another worker's folder" in (stale_reason(gen, lambda tag: True, tmp_path / "w2") or "")
