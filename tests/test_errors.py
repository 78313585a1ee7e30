"""Errors by type: lower layers raise their package's error, the stage wrapper names the stage."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from prefect import flow, task

from taskfoundry.config import Config
from taskfoundry.errors import BuildError, NoBuildSystem, SourceError, StageError
from taskfoundry.flows.tasks import StageLog, run_stage


def test_errors_carry_their_message_and_log() -> None:
    err = BuildError("no compiler", Path("/l/build.log"))
    assert (err.message, err.log, str(err)) == (
        "no compiler",
        Path("/l/build.log"),
        "no compiler (log: /l/build.log)",
    )
    assert isinstance(NoBuildSystem("x"), BuildError)  # the build agent catches it by type


def test_stage_error_names_the_stage_and_survives_pickling() -> None:
    """A failed task's state is persisted: the error must come back whole."""
    err = StageError.wrap("build", BuildError("no compiler", Path("/l/build.log")))
    back = pickle.loads(pickle.dumps(err))
    assert (back.stage, back.message, back.log) == ("build", "no compiler", Path("/l/build.log"))
    assert str(back) == "build stage failed: no compiler (log: /l/build.log)"
    plain = pickle.loads(pickle.dumps(SourceError("gone", Path("/x"))))
    assert (type(plain), plain.message, plain.log) == (SourceError, "gone", Path("/x"))


@task(name="fetch")
def failing_fetch(message: str) -> None:
    raise SourceError(message)


@task(name="oops")
def buggy() -> None:
    raise KeyError("x")  # a bug is not a stage failure: it propagates as it is


@flow(name="failing")
def failing_flow(config: Config, bug: bool) -> None:
    stage_log = StageLog.start("src")
    run_stage(stage_log, config, buggy if bug else failing_fetch, *([] if bug else ["no such thing"]))


def test_the_stage_wrapper_names_the_stage(tmp_path: Path, prefect_harness: None) -> None:
    config = Config(out=tmp_path)
    with pytest.raises(StageError) as info:
        failing_flow(config, False)
    assert info.value.stage == "fetch" and str(info.value) == "fetch stage failed: no such thing"
    assert isinstance(info.value.__cause__, SourceError)
    with pytest.raises(KeyError):
        failing_flow(config, True)
