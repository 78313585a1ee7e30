"""The linter's configuration: which rules run, thresholds, and recorded allowances."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from taskfoundry.errors import ConfigError

DEFAULT_ROUNDTRIP_MODULES: tuple[str, ...] = (
    "gzip",
    "zlib",
    "bz2",
    "lzma",
    "json",
    "zipfile",
    "tarfile",
)


class Allowance(BaseModel):
    """A finding that a task's author accepted on purpose, with the reason recorded."""

    model_config = ConfigDict(extra="forbid")

    test: str = Field(description="glob on the test name, e.g. 'test_digest_*' or 'TestX::*'")
    rule: str = Field(description="rule id (a glob is accepted, e.g. '*')")
    reason: str = Field(description="why the finding is acceptable; recorded in every report")

    @field_validator("reason")
    @classmethod
    def _reason_given(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("an allowance needs a non-empty reason")
        return value.strip()

    def matches(self, test: str, rule: str) -> bool:
        """Whether this allowance covers `rule` on the test named `test`."""
        return fnmatch.fnmatchcase(test, self.test) and fnmatch.fnmatchcase(rule, self.rule)


SuiteChoice = Literal["auto", "output", "unit"]


class LintConfig(BaseModel):
    """Settings of the assertion linter; every field has a default that suits generated suites."""

    model_config = ConfigDict(extra="forbid")

    enabled: list[str] | None = Field(
        default=None, description="rule ids to run; None runs every registered rule"
    )
    disabled: list[str] = Field(default_factory=list, description="rule ids never to run")
    short_substring_min: int = Field(
        default=15, ge=1, description="`lit in output` with a shorter literal is short_substring"
    )
    catches_min_chars: int = Field(
        default=20, ge=1, description="least text after `CATCHES:` in a test's docstring"
    )
    golden_literal_min: int = Field(
        default=200, ge=1, description="a string literal this long counts as a golden value"
    )
    roundtrip_modules: list[str] = Field(
        default_factory=list,
        description="standard-library modules, beyond gzip/zlib/bz2/lzma/json/zipfile/tarfile, "
        "whose decoders make a roundtrip self-consistent (e.g. 'base64', 'plistlib')",
    )
    run_functions: list[str] = Field(
        default_factory=list,
        description="extra names of functions that run the program under test "
        "(besides run, subprocess.run, check_output, ...)",
    )
    allowances: list[Allowance] = Field(
        default_factory=list, description="accepted findings, each with its reason"
    )
    suite: SuiteChoice = Field(
        default="auto",
        description="what kind of test each is: output (runs the program and checks what it "
        "printed or wrote), unit (calls the code), or auto: output when the test runs a program",
    )

    def all_roundtrip_modules(self) -> frozenset[str]:
        """The default roundtrip modules plus the configured extra ones."""
        return frozenset(DEFAULT_ROUNDTRIP_MODULES) | frozenset(self.roundtrip_modules)

    def allowance_for(self, test: str, rule: str) -> Allowance | None:
        """The first allowance that covers `rule` on `test`, if any."""
        for allowance in self.allowances:
            if allowance.matches(test, rule):
                return allowance
        return None


def load_config(path: Path) -> LintConfig:
    """Read a LintConfig from a YAML file; raise ConfigError naming the file on any problem."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read lint config {path}: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"lint config {path} must be a mapping, got {type(data).__name__}")
    try:
        return LintConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"invalid lint config {path}: {exc}") from exc
