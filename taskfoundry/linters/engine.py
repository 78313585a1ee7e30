"""Lint one source or many files: parse, collect tests, run the rules, triage assertions."""

from __future__ import annotations

import logging
import tokenize
from collections.abc import Iterator, Sequence
from pathlib import Path

import libcst as cst

from taskfoundry.linters.config import LintConfig
from taskfoundry.linters.facts import Case, collect_cases, module_info
from taskfoundry.linters.models import (
    SEVERITY_ORDER,
    AllowedFinding,
    AssertionTriage,
    Finding,
    LintError,
    LintResult,
)
from taskfoundry.linters.positions import statement_lines
from taskfoundry.linters.registry import Rule, active_rules, severity_for
from taskfoundry.linters.triage import triage

logger = logging.getLogger(__name__)


def _parse_error(exc: Exception) -> str:
    if isinstance(exc, cst.ParserSyntaxError):
        return f"cannot parse (line {exc.raw_line}, column {exc.raw_column}): {exc.message}"
    return f"cannot parse: {exc}"


def _lint_case(case: Case, path: str, rules: list[Rule], config: LintConfig) -> LintResult:
    suite = case.suite
    result = LintResult(tests=[f"{path}::{case.name}"], suites={suite: 1})
    for rule in rules:
        severity, note = severity_for(rule, suite)
        if severity is None:
            continue
        for line, message in rule.check(case):
            finding = Finding(
                path=path,
                test=case.name,
                line=line,
                rule=rule.id,
                severity=severity,
                message=f"{message} ({note})" if note else message,
            )
            allowance = config.allowance_for(case.name, rule.id)
            if allowance is None:
                result.findings.append(finding)
            else:
                result.allowed.append(AllowedFinding(**finding.model_dump(), reason=allowance.reason))
    for assertion in case.assertions:
        class_, reason = triage(case, assertion)
        result.assertions.append(
            AssertionTriage.model_validate(
                {
                    "path": path,
                    "test": case.name,
                    "line": assertion.line,
                    "class": class_,
                    "reason": reason,
                }
            )
        )
    return result


def lint_source(source: str, path: str = "<string>", config: LintConfig | None = None) -> LintResult:
    """Lint the pytest tests in one Python source; a parse failure becomes an error record.

    Raises ConfigError when the config names an unknown rule.
    """
    config = config or LintConfig()
    rules = active_rules(config)
    try:
        module = cst.parse_module(source)
    except (cst.ParserSyntaxError, cst.CSTValidationError, RecursionError) as exc:
        return LintResult(errors=[LintError(path=path, message=_parse_error(exc))])
    lines = statement_lines(module, source)
    info = module_info(module, lines, config)
    result = LintResult()
    for case in collect_cases(module, info):
        result.extend(_lint_case(case, path, rules, config))
    result.findings.sort(key=lambda f: (f.line, SEVERITY_ORDER[f.severity], f.rule))
    return result


def is_test_file(path: Path) -> bool:
    """pytest's default test file pattern: test_*.py or *_test.py."""
    return path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test"))


def discover(paths: Sequence[Path]) -> Iterator[Path]:
    """Files named directly, and test files found recursively under directories, sorted."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.py") if is_test_file(p) and p.is_file())
        else:
            yield path


def lint_file(path: Path, config: LintConfig) -> LintResult:
    """Lint one file; unreadable or undecodable files become an error record.

    The file is decoded as Python does it: UTF-8 unless it declares a coding.
    """
    try:
        with tokenize.open(path) as handle:  # honours a PEP 263 coding declaration
            source = handle.read()
    except FileNotFoundError:
        return LintResult(errors=[LintError(path=str(path), message="no such file")])
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        return LintResult(errors=[LintError(path=str(path), message=f"cannot read: {exc}")])
    return lint_source(source, str(path), config)


def lint_paths(paths: Sequence[Path], config: LintConfig | None = None) -> LintResult:
    """Lint files and directories of pytest tests; each bad file is reported, not fatal."""
    config = config or LintConfig()
    active_rules(config)  # fail fast on an unknown rule, before any file
    result = LintResult()
    for path in discover(paths):
        logger.debug("linting %s", path)
        try:
            result.extend(lint_file(path, config))
        except Exception as exc:  # per-file boundary: one bad file must not stop the run
            logger.exception("internal linter error on %s", path)
            result.errors.append(LintError(path=str(path), message=f"internal linter error: {exc!r}"))
    return result
