"""Flags mean what their help says (issue 59): `--max-probes N` is the explorer's budget (it ran
120 probes for 20: the adaptive growth went past it), `--version` exists, `--mutants 0` says so."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from taskfoundry.cli import build_flags, main, make_config
from taskfoundry.grading.config import EvalConfig
from taskfoundry.kinds.program.mutate.analyze import analyze
from taskfoundry.kinds.program.settings import MutationConfig


def test_max_probes_is_the_budget_and_growth_past_it_is_off() -> None:
    config = make_config(None, **build_flags(None, 20, None))
    assert (config.explorer.max_probes, config.explorer.growth) == (20, 1.0)
    default = make_config(None, **build_flags(None, None, None))
    assert default.explorer.growth > 1.0  # without the flag the budget still grows with coverage


def test_version_is_printed() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("taskfoundry 0.")


def test_a_zero_mutant_budget_names_the_flag(tmp_path: Path) -> None:
    report = analyze("image", None, tmp_path, tmp_path, [], {}, MutationConfig(budget=0), EvalConfig())  # type: ignore[arg-type]
    assert report.skipped is not None and "--mutants 0" in report.skipped
