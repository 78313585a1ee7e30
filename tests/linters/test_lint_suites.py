"""`lint` knows a unit test from a test of a program's output (issue 59): the rules made for
output do not give HIGH findings a careful reviewer would reject on ordinary unit tests, and
each case's output-test twin (the same assertion on what a program printed) is still HIGH."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from lint_support import lint

from taskfoundry.linters import LintConfig
from taskfoundry.linters.cli import lint as lint_command

# (rule, a unit test a reviewer would accept, its twin on a program's output)
CASES = [
    (
        "trivially_true",  # a test of the generated __eq__, and two objects built alike
        "def test_eq():\n    a = C(1)\n    assert a == a\n    assert C(1) == C(1)\n",
        "def test_eq():\n    out = run(['x']).stdout\n    assert out == out\n",
    ),
    (
        "short_substring",  # membership in a mapping, not a substring of output
        "def test_ann():\n    assert 'val' in f.__annotations__\n",
        "def test_ann():\n    assert 'val' in run(['x']).stdout\n",
    ),
    (
        "no_assertions",  # a crash's regression test: it fails when the code raises
        "def test_no_crash():\n    make_class('C', {'a': 1})\n",
        "def test_no_crash():\n    run(['x'])\n",
    ),
    (
        "all_assertions_weak",  # a boolean predicate asserted is an exact check of code
        "def test_subset():\n    assert r.is_subset(s)\n    assert s.is_superset(r)\n",
        "def test_subset():\n    out = run(['x']).stdout\n"
        "    assert len(out) > 3\n    assert out.isascii()\n",
    ),
]


@pytest.mark.parametrize(("rule", "unit", "output"), CASES, ids=[c[0] for c in CASES])
def test_a_unit_test_is_not_held_to_the_rules_for_program_output(rule: str, unit: str, output: str) -> None:
    read = lint(unit)
    assert read.suites == {"unit": 1}
    assert not [f for f in read.findings if f.severity == "HIGH"], read.findings
    twin = lint(output)
    assert twin.suites == {"output": 1}
    assert rule in {f.rule for f in twin.findings if f.severity == "HIGH"}, twin.findings
    forced = lint(unit, LintConfig(suite="output"))  # the distinction switched off: HIGH again
    assert rule in {f.rule for f in forced.findings if f.severity == "HIGH"}, forced.findings


@pytest.mark.parametrize(
    "body",
    [
        "def test_same():\n    e = E(1)\n    assert e is e\n",  # identity of one name cannot fail
        "def test_placeholder():\n    pass\n",  # a test that runs nothing
        "def test_swallowed():\n    try:\n        assert f() == 2\n"
        "    except AssertionError:\n        pass\n",
    ],
    ids=["is-itself", "empty", "swallowed"],
)
def test_what_cannot_fail_is_still_high_in_a_unit_test(body: str) -> None:
    read = lint(body)
    assert read.suites == {"unit": 1} and any(f.severity == "HIGH" for f in read.findings), read.findings


def test_a_crash_test_reads_as_checking_only_that_nothing_raises() -> None:
    (finding,) = [f for f in lint(CASES[2][1]).findings if f.rule == "no_assertions"]
    assert finding.severity == "MED" and "a unit test: it checks only that nothing raises" in finding.message


def test_the_report_says_what_kind_of_suite_it_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert f() == 1\n")
    (tmp_path / "test_b.py").write_text(
        "from tfrun import run\n\ndef test_b():\n    assert run(['x']).stdout == 'x\\n'\n"
    )
    result = CliRunner().invoke(lint_command, [str(tmp_path)])
    assert "suite: 1 output, 1 unit tests" in result.output, result.output
    forced = CliRunner().invoke(lint_command, [str(tmp_path), "--suite", "unit", "--format", "json"])
    assert '"unit": 2' in forced.output
