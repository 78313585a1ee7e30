"""lint_source / lint_paths: discovery, naming, line numbers, per-file errors, JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

from taskfoundry.linters import RULES, LintResult, lint_paths, lint_source

GOOD = '''"""Suite."""
from tfrun import run


def test_ok():
    """CATCHES: a rebuild that prints anything but x for the x command."""
    r = run(["x"])
    assert r.returncode == 0
    assert r.stdout == "x\\n"
'''

BAD = '''from tfrun import run


def test_weak():
    """CATCHES: a rebuild that prints anything but x for the x command."""
    r = run(["x"])
    assert r.returncode == 0
'''


def test_registry_severities() -> None:
    high = {r for r, rule in RULES.items() if rule.severity == "HIGH"}
    med = {r for r, rule in RULES.items() if rule.severity == "MED"}
    # Table 8's 14 HIGH rules plus ours (expected_from_docstring), its 6 MED rules
    assert len(high) == 15 and len(med) == 6 and "expected_from_docstring" in high
    assert RULES["catches"].severity == "LOW"
    assert "short_substring" in high and "for_no_guard" in med


def test_class_methods_named_with_double_colon() -> None:
    source = """
import pytest
from tfrun import run

class TestGroup:
    @pytest.mark.parametrize("arg", ["a"])
    def test_inner(self, arg):
        assert run([arg]).returncode == 0

    class TestNested:
        def test_deep(self):
            pass

    def helper(self):
        pass

class Helper:
    def test_not_collected(self):
        pass
"""
    result = lint_source(source, "t.py")
    assert result.tests == ["t.py::TestGroup::test_inner", "t.py::TestGroup::TestNested::test_deep"]
    lines = {(f.test, f.rule): f.line for f in result.findings}
    assert lines[("TestGroup::test_inner", "sole_returncode")] == 8
    assert lines[("TestGroup::test_inner", "catches")] == 7  # the def line, not the decorator
    assert lines[("TestGroup::TestNested::test_deep", "pass_body")] == 11


def test_findings_carry_actionable_messages() -> None:
    result = lint_source(BAD, "t.py")
    finding = next(f for f in result.findings if f.rule == "sole_returncode")
    assert finding.severity == "HIGH"
    assert "assert the exact stdout" in finding.message
    assert finding.line == 7


def test_unparsable_source_is_an_error_not_a_crash() -> None:
    result = lint_source("def test_x(:\n    pass\n", "broken.py")
    assert result.findings == [] and result.tests == []
    assert result.errors[0].path == "broken.py"
    assert "cannot parse" in result.errors[0].message


def test_invalid_concatenation_is_an_error() -> None:
    result = lint_source('x = "a" b"b"\n', "mixed.py")
    assert result.errors and "cannot parse" in result.errors[0].message


def test_lint_paths_reports_bad_files_and_lints_the_rest(tmp_path: Path) -> None:
    (tmp_path / "test_good.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "test_broken.py").write_text("def test_x(:\n", encoding="utf-8")
    (tmp_path / "test_binary.py").write_bytes(b"\xff\xfe\x00bad")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "weak_test.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "helpers.py").write_text(BAD, encoding="utf-8")  # not a test file
    result = lint_paths([tmp_path, tmp_path / "missing_test.py"])
    errors = {Path(e.path).name: e.message for e in result.errors}
    assert set(errors) == {"test_broken.py", "test_binary.py", "missing_test.py"}
    assert "cannot read" in errors["test_binary.py"]
    assert errors["missing_test.py"] == "no such file"
    assert [t.split("::")[1] for t in result.tests] == ["test_weak", "test_ok"]  # sorted paths
    assert result.high_tests() == {"test_weak"}


def test_explicit_file_is_linted_whatever_its_name(tmp_path: Path) -> None:
    path = tmp_path / "checks.py"
    path.write_text(BAD, encoding="utf-8")
    assert lint_paths([path]).high_tests() == {"test_weak"}


def test_to_json_shape() -> None:
    data = lint_source(BAD, "t.py").to_json()
    json.dumps(data)  # serialisable
    assert set(data) >= {"findings", "assertions"}
    assert set(data["findings"][0]) == {"path", "test", "line", "rule", "severity", "message"}
    assert set(data["assertions"][0]) == {"path", "test", "line", "class", "reason"}


def test_result_round_trip() -> None:
    result = lint_source(BAD, "t.py")
    again = LintResult.model_validate_json(result.model_dump_json(by_alias=True))
    assert again == result


def test_unittest_style_assertions() -> None:
    source = '''
import unittest
from tfrun import run

class TestCli(unittest.TestCase):
    def test_out(self):
        """CATCHES: a rebuild that prints anything but x for the x command."""
        r = run(["x"])
        self.assertEqual(r.returncode, 0)
        self.assertIn("ok", r.stdout)
'''
    result = lint_source(source, "t.py")
    assert {f.rule for f in result.findings} == {"short_substring"}
    assert [a.class_ for a in result.assertions] == ["contract", "observable"]
    assert [a.line for a in result.assertions] == [9, 10]


def test_multiline_statements_keep_their_first_line() -> None:
    source = '''from tfrun import run


def test_x():
    """CATCHES: a rebuild that prints anything but x for the x command."""
    r = run(
        ["x"],
    )
    assert (
        "ok" in r.stdout
    )
'''
    finding = next(f for f in lint_source(source).findings if f.rule == "short_substring")
    assert finding.line == 9


def test_self_referential_bindings_terminate() -> None:
    source = '''from tfrun import run


def test_rebind(tmp_path):
    """CATCHES: a rebuild that prints anything but x for the x command."""
    p = p / "x"
    p.write_text("a")
    text = text.strip()
    n = n + 1
    r = run(["x", str(p)])
    assert p.read_text() == text
    assert r.stdout == r.stdout.strip() + str(n)
'''
    result = lint_source(source, "t.py")
    assert not result.errors
    assert len(result.assertions) == 2


def test_coding_declaration_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "test_latin.py"
    path.write_bytes(
        b"# -*- coding: latin-1 -*-\nfrom tfrun import run\n\n\n"
        b"def test_x():\n    assert run(['x']).stdout == '\xe9\\n'\n"
    )
    result = lint_paths([path])
    assert not result.errors
    assert result.tests == [f"{path}::test_x"]
