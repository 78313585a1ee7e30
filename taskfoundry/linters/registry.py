"""The rule registry: rule id -> severity, one-line summary, checker."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from taskfoundry.errors import ConfigError
from taskfoundry.linters import rules_basic as basic
from taskfoundry.linters import rules_control as control
from taskfoundry.linters import rules_golden as golden
from taskfoundry.linters import rules_weak as weak
from taskfoundry.linters.config import LintConfig
from taskfoundry.linters.facts import Case
from taskfoundry.linters.models import Severity

Checker = Callable[[Case], Iterable[tuple[int, str]]]


@dataclass(frozen=True)
class Rule:
    """One assertion rule: its id, severity, what it flags, and the function that checks it."""

    id: str
    severity: Severity
    summary: str
    check: Checker


_TABLE: list[tuple[str, Severity, str, Checker]] = [
    ("no_assertions", "HIGH", "the test asserts nothing", basic.check_no_assertions),
    ("trivially_true", "HIGH", "an assertion that cannot fail", basic.check_trivially_true),
    ("sole_returncode", "HIGH", "only the exit status is checked", basic.check_sole_returncode),
    ("returncode_in_list", "HIGH", "exit status in a set", basic.check_returncode_in_list),
    ("pass_body", "HIGH", "empty test body", basic.check_pass_body),
    ("assertion_disjunction", "HIGH", "`or` / one-of", basic.check_assertion_disjunction),
    ("if_no_else", "HIGH", "assertions skipped by an if", control.check_if_no_else),
    ("if_else_both_assert", "HIGH", "either branch passes", control.check_if_else_both_assert),
    ("try_except_swallow", "HIGH", "failure swallowed", control.check_try_except_swallow),
    ("all_assertions_weak", "HIGH", "no exact check at all", weak.check_all_assertions_weak),
    ("short_substring", "HIGH", "substring too short", weak.check_short_substring),
    (
        "golden_written_in_test",
        "HIGH",
        "test writes what it compares against",
        golden.check_golden_written_in_test,
    ),
    ("golden_no_equality", "HIGH", "golden checked in part", golden.check_golden_no_equality),
    ("golden_docstring", "HIGH", "golden named in docstring, unused", golden.check_golden_docstring),
    (
        "expected_from_docstring",
        "HIGH",
        "expected value read from the docstring",
        golden.check_expected_from_docstring,
    ),
    ("for_no_guard", "MED", "loop may run zero times", control.check_for_no_guard),
    ("weak_sole_assertion", "MED", "one weak assertion", weak.check_weak_sole_assertion),
    (
        "relative_length_assertion",
        "MED",
        "size only bounded",
        weak.check_relative_length_assertion,
    ),
    ("any_all_no_guard", "MED", "all() over maybe-empty", control.check_any_all_no_guard),
    (
        "file_exists_no_content",
        "MED",
        "file existence only",
        weak.check_file_exists_no_content,
    ),
    (
        "only_negative_assertions",
        "MED",
        "only what output is not",
        weak.check_only_negative_assertions,
    ),
    ("catches", "LOW", "missing or short CATCHES: docstring", basic.check_catches),
]

# How the rules read a unit test (one that calls the code instead of running a program). They
# were made for tests of a program's output, where `x in out` with "ok" passes for any chatty
# program and a test with no assertion passes for every program. In a unit test a boolean
# predicate (`assert r.is_subset(r)`), a membership test (`"val" in p.__annotations__`) or two
# objects built alike (`assert cls(1) == cls(1)`, a test of __eq__) are exact, and a test with no
# assertion still fails when the code raises (the regression tests of a crash): None, the rule
# does not apply to unit tests; a severity, it applies at that one, with the note said.
UNIT: dict[str, tuple[Severity | None, str]] = {
    "no_assertions": ("MED", "a unit test: it checks only that nothing raises"),
    "assertion_disjunction": ("MED", "a unit test: one of several results is accepted"),
    "all_assertions_weak": (None, ""),
    "short_substring": (None, ""),
    "weak_sole_assertion": (None, ""),
    "golden_no_equality": (None, ""),
    "golden_docstring": (None, ""),
    "golden_written_in_test": (None, ""),
    "sole_returncode": (None, ""),
    "returncode_in_list": (None, ""),
    "only_negative_assertions": ("LOW", "a unit test"),
    "file_exists_no_content": ("LOW", "a unit test"),
    "catches": (None, ""),
}


def severity_for(rule: Rule, suite: str) -> tuple[Severity | None, str]:
    """The severity `rule` has on a test of `suite` (output or unit), and a note for a unit test."""
    if suite == "output":
        return rule.severity, ""
    return UNIT.get(rule.id, (rule.severity, ""))


RULES: dict[str, Rule] = {
    rule_id: Rule(rule_id, severity, summary, check) for rule_id, severity, summary, check in _TABLE
}


def active_rules(config: LintConfig) -> list[Rule]:
    """The rules a config runs, in registry order; unknown ids raise ConfigError."""
    named = set(config.disabled) | set(config.enabled or [])
    for allowance in config.allowances:
        if not any(c in allowance.rule for c in "*?["):
            named.add(allowance.rule)
    unknown = sorted(named - set(RULES))
    if unknown:
        raise ConfigError(f"unknown lint rule(s) {unknown}; valid rules: {', '.join(RULES)}")
    enabled = set(RULES) if config.enabled is None else set(config.enabled)
    return [rule for rule in RULES.values() if rule.id in enabled and rule.id not in config.disabled]
