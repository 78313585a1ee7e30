"""Rules on golden values (expected-output files, large literals).

For every rule: three tests it must flag, three near misses it must not.
"""

from __future__ import annotations

import pytest
from lint_support import rule_params, rules_of

BIG = "x" * 250

CASES: dict[str, tuple[list[str], list[str]]] = {
    "golden_written_in_test": (
        [
            """
            def test_a(tmp_path):
                r = run(["x"])
                golden = tmp_path / "expected.txt"
                golden.write_text(r.stdout)
                assert r.stdout == golden.read_text()
            """,
            """
            GOLDEN = Path(__file__).parent / "golden" / "x.txt"

            def test_b():
                r = run(["x"])
                if not GOLDEN.exists():
                    GOLDEN.write_text(r.stdout)
                assert GOLDEN.read_text() == r.stdout
            """,
            """
            def test_c(tmp_path):
                r = run(["x", "-o", "out.bin"], cwd=tmp_path)
                expected = tmp_path / "expected.bin"
                shutil.copy(tmp_path / "out.bin", expected)
                assert (tmp_path / "out.bin").read_bytes() == expected.read_bytes()
            """,
            """
            def test_d(tmp_path):
                out = tmp_path / "out.txt"
                out.write_text("Alice\\n")
                run(["select", "-o", str(out)], cwd=tmp_path)
                assert out.read_text() == "Alice\\n"
            """,
        ],
        [
            """
            def test_a(tmp_path):
                (tmp_path / "in.csv").write_text("name\\nAlice\\n")
                run(["select", "in.csv", "-o", "out.txt"], cwd=tmp_path)
                assert (tmp_path / "out.txt").read_text() == "Alice\\n"
            """,
            """
            def test_b():
                expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
                r = run(["--help"])
                assert r.stdout == expected
            """,
            """
            def test_c(tmp_path):
                first = run(["encode"], stdin="hello\\n")
                (tmp_path / "enc.txt").write_text(first.stdout)
                second = run(["decode", "enc.txt"], cwd=tmp_path)
                assert second.stdout == "hello\\n"
            """,
        ],
    ),
    "golden_no_equality": (
        [
            """
            def test_a():
                expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
                r = run(["--help"])
                assert expected[:40] in r.stdout
            """,
            """
            def test_b():
                expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
                r = run(["--help"])
                assert r.stdout.startswith(expected.splitlines()[0])
            """,
            """
            def test_c():
                expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
                r = run(["--help"])
                assert len(r.stdout) == len(expected)
            """,
            f"""
            BIG = "{BIG}"

            def test_d():
                r = run(["x"])
                assert BIG[:20] in r.stdout
            """,
        ],
        [
            """
            def test_a():
                expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
                r = run(["--help"])
                assert r.stdout == expected
            """,
            """
            def test_b():
                expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
                r = run(["--help"])
                assert r.stdout.splitlines() == expected.splitlines()
            """,
            """
            def test_c():
                expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
                r = run(["--help"])
                assert expected[:10] in r.stdout
                assert r.stdout == expected
            """,
            """
            def test_d():
                expected = (Path(__file__).parent / "golden" / "out.json").read_text()
                r = run(["--json"])
                assert json.loads(r.stdout) == json.loads(expected)
            """,
        ],
    ),
    "golden_docstring": (
        [
            """
            def test_a():
                \"\"\"CATCHES: a rebuild whose help differs from golden/help.txt.\"\"\"
                r = run(["--help"])
                assert r.stdout.startswith("usage: prog")
            """,
            """
            def test_b(tmp_path):
                \"\"\"Compares the report with the expected output in report.out.\"\"\"
                r = run(["report"], cwd=tmp_path)
                assert r.stdout == "total 3\\n"
            """,
            """
            def test_c():
                \"\"\"CATCHES: a wrong table; the snapshot is tests/snapshots/table.txt.\"\"\"
                expected = (Path(__file__).parent / "snapshots" / "list.txt").read_text()
                assert run(["table"]).stdout == expected
            """,
        ],
        [
            """
            def test_a():
                \"\"\"CATCHES: a rebuild whose help differs from golden/help.txt.\"\"\"
                expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
                assert run(["--help"]).stdout == expected
            """,
            """
            def test_b(tmp_path):
                \"\"\"CATCHES: a rebuild that reads data/people.csv wrongly.\"\"\"
                r = run(["count", "data/people.csv"], cwd=tmp_path)
                assert r.stdout == "3\\n"
            """,
            """
            def test_c():
                \"\"\"CATCHES: a wrong table, checked against the golden file table.txt.\"\"\"
                assert run(["table"]).stdout == (Path(__file__).parent / "table.txt").read_text()
            """,
        ],
    ),
    "expected_from_docstring": (
        [
            """
            def test_a():
                \"\"\"usage: prog [-h]\"\"\"
                r = run(["--help"])
                assert r.stdout.strip() == test_a.__doc__
            """,
            """
            def test_b():
                \"\"\"Expected: 42\"\"\"
                expected = inspect.getdoc(test_b).split("Expected:")[1].strip()
                r = run(["x"])
                assert r.stdout.strip() == expected
            """,
            """
            def test_c(request):
                \"\"\"hello\"\"\"
                r = run(["x"])
                assert r.stdout == textwrap.dedent(request.function.__doc__)
            """,
        ],
        [
            """
            def test_a():
                \"\"\"CATCHES: a rebuild that prints the wrong answer for x.\"\"\"
                r = run(["x"])
                assert r.stdout == "42\\n"
            """,
            """
            def test_b():
                print(test_b.__doc__)
                r = run(["x"])
                assert r.stdout == "42\\n"
            """,
            """
            def test_c():
                doc = run(["--doc"]).stdout
                assert doc == "prog: documentation\\n"
            """,
        ],
    ),
}


@pytest.mark.parametrize(("rule", "source"), rule_params(CASES, flagged=True))
def test_rule_flags(rule: str, source: str) -> None:
    assert rule in rules_of(source)


@pytest.mark.parametrize(("rule", "source"), rule_params(CASES, flagged=False))
def test_rule_near_miss(rule: str, source: str) -> None:
    assert rule not in rules_of(source)


def test_docstring_of_other_objects_is_not_expected_from_docstring() -> None:
    source = """
    import csv

    def test_module_doc():
        r = run(["--doc"])
        assert r.stdout == csv.__doc__
    """
    assert "expected_from_docstring" not in rules_of(source)


def test_unittest_own_docstring_is_expected_from_docstring() -> None:
    source = """
    import unittest

    class TestDoc(unittest.TestCase):
        def test_doc(self):
            \"\"\"hello\"\"\"
            self.assertEqual(run(["x"]).stdout.strip(), self.shortDescription())
    """
    assert "expected_from_docstring" in rules_of(source)
