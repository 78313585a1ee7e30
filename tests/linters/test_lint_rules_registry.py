"""Every registered rule has its flag and near-miss examples in one of the family files."""

from __future__ import annotations

import test_lint_rules_basic
import test_lint_rules_control
import test_lint_rules_golden
import test_lint_rules_weak

from taskfoundry.linters import RULES

FAMILIES = (test_lint_rules_basic, test_lint_rules_control, test_lint_rules_golden, test_lint_rules_weak)


def test_every_rule_has_three_flags_and_three_near_misses() -> None:
    covered: dict[str, tuple[list[str], list[str]]] = {}
    for module in FAMILIES:
        assert not set(covered) & set(module.CASES)
        covered.update(module.CASES)
    assert set(covered) == set(RULES)
    assert len(RULES) == 22  # Table 8's 21 and expected_from_docstring
    for rule, (flags, misses) in covered.items():
        assert len(flags) >= 3, rule
        assert len(misses) >= 3, rule
