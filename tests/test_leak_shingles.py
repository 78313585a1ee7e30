"""The host half of the leak scan, without Docker: parse checks and verbatim runs."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from taskfoundry.kinds.program.cleanroom import shingles
from taskfoundry.kinds.program.cleanroom.leakscan import source_hashes, text_findings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = ["csvq", "logsum", "rcalc"]


def _code_files(name: str) -> list[tuple[Path, str]]:
    return list(shingles.source_files(EXAMPLES / name))


def _other_files(name: str) -> list[Path]:
    code = {p for p, _ in _code_files(name)}
    return [p for p in (EXAMPLES / name).rglob("*") if p.is_file() and p not in code]


@pytest.mark.parametrize("name", NAMES)
def test_every_source_file_parses_as_source_whatever_its_name(name: str) -> None:
    for path, lang in _code_files(name):
        hit = shingles.parse_as_source(path.read_bytes())
        expected = {"c": {"c", "cpp"}, "cpp": {"cpp"}}.get(lang, {lang})
        assert hit is not None and hit.language in expected, path


@pytest.mark.parametrize("name", NAMES)
def test_docs_data_and_expected_outputs_do_not_parse_as_source(name: str) -> None:
    for path in _other_files(name):
        assert shingles.parse_as_source(path.read_bytes()) is None, path


def test_prose_and_config_that_parse_as_expressions_are_not_source() -> None:
    for text in (
        "a, b, c\n1, 2, 3\n",
        "max_width = 100\nedition = 2021\n",
        "hello\n",
        "",
        "# Title\n\nSome words here.\n",
    ):
        assert shingles.parse_as_source(text.encode()) is None, text


BRACELESS_CPP = "Widget::~Widget() = default;  // no brace anywhere in this text\n"


def _corpus() -> list[bytes]:
    """Code, docs and data of this project and its examples, and texts made to sit near the gate."""
    root = EXAMPLES.parent
    paths = [
        *EXAMPLES.rglob("*"),
        *(root / "taskfoundry" / "cleanroom").glob("*.py"),
        *(root / "docs").glob("*.md"),
    ]
    texts = [p.read_bytes() for p in sorted(paths) if p.is_file() and p.stat().st_size < 200_000]
    made = [
        "struct Point::Point(int x) : x_(x) {}\nPoint::Point() = /* kept */ default;\n",
        "class Widget {\npublic:\n  Widget(const Widget&) =\n      delete;\n};\n",
        BRACELESS_CPP,
        "fn main() -> u32 { 42 }\n",
        "func Add(a, b int) int { return a + b }\n",
        "type Pair struct{ A, B int }\n",
        "async def fetch(url):\n    return await get(url)\n",
        "default output is not changed; delete the file to reset it\n",
    ]
    return texts + [t.encode() for t in made]


def test_the_definition_gate_changes_no_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text the gate keeps from a grammar (no brace, no keyword) has no definition under it:
    every verdict is what parsing it under all five grammars gives."""
    corpus = _corpus()
    gated = [shingles._parse_as_source(data, 0.02) for data in corpus]
    every = re.compile(rb"")
    monkeypatch.setattr(shingles, "_NEEDS", dict.fromkeys(shingles.GRAMMARS, every))
    assert [shingles._parse_as_source(data, 0.02) for data in corpus] == gated
    assert sum(hit is not None for hit in gated) > 20  # the corpus has code, and it is found
    hit = gated[corpus.index(BRACELESS_CPP.encode())]  # a C++ definition with no brace
    assert "{" not in BRACELESS_CPP and hit is not None and hit.language == "cpp"


@dataclass
class _Node:
    """Just what error_bytes reads of a tree-sitter node."""

    type: str
    children: list[_Node]
    start_byte: int = 0
    end_byte: int = 0
    is_missing: bool = False
    has_error: bool = True


def test_error_bytes_of_a_tree_deeper_than_the_stack() -> None:
    """Prose parsed as C can nest its errors thousands of levels deep (GNU hello's ABOUT-NLS, a
    table of `|` and `[]`, is 2,620): counting them must not overflow Python's stack."""
    node = _Node("ERROR", [], 10, 17)
    for _ in range(5000):
        node = _Node("binary_expression", [_Node("identifier", [], has_error=False), node])
    deep = _Node("translation_unit", [node, _Node("ERROR", [], 0, 3), _Node("x", [], is_missing=True)])
    assert shingles.error_bytes(deep) == 7 + 3 + 1  # type: ignore[arg-type]


@pytest.mark.parametrize("name", NAMES)
def test_source_and_doc_lexers_agree_on_the_source_itself(name: str) -> None:
    """The tree-sitter tokens of a file equal the doc lexer's tokens of the same text, so a
    function pasted into a README yields the same shingles as in the source."""
    for path, lang in _code_files(name):
        data = path.read_bytes()
        ts_tokens = [t for t, _ in shingles.source_tokens(data, lang)]
        assert ts_tokens == [t for t, _ in shingles.text_tokens(data.decode(), lang)], path


@pytest.mark.parametrize(
    ("name", "rel"), [("csvq", "src/csv.c"), ("logsum", "parse.go"), ("rcalc", "src/parser.rs")]
)
def test_forty_lines_pasted_into_the_readme_are_found(name: str, rel: str) -> None:
    index = shingles.build_index(EXAMPLES / name)
    lines = (EXAMPLES / name / rel).read_text().splitlines()
    readme = (EXAMPLES / name / "README.md").read_text()
    doc = readme + "\n## Internals\n\n```\n" + "\n".join(lines[60:100]) + "\n```\n"
    runs = shingles.find_runs(index, doc)
    assert runs and all(r.source_file == rel for r in runs)
    assert sum(r.tokens for r in runs) >= 150
    assert runs[0].first_line > len(readme.splitlines())


@pytest.mark.parametrize("name", NAMES)
def test_the_real_readmes_hold_no_verbatim_source(name: str) -> None:
    index = shingles.build_index(EXAMPLES / name)
    for doc in ("README.md", "csvq.1"):
        if (EXAMPLES / name / doc).exists():
            assert shingles.find_runs(index, (EXAMPLES / name / doc).read_text()) == []


def test_help_text_that_the_program_prints_is_not_a_leak(tmp_path: Path) -> None:
    """String literals are one placeholder token: docs repeating the --help text never match."""
    words = " ".join(f"word{i}" for i in range(80))
    (tmp_path / "main.c").write_text(f'int main(void) {{ puts("{words}"); return 0; }}\n')
    index = shingles.build_index(tmp_path, k=20)
    assert shingles.find_runs(index, f"Usage:\n\n{words}\n") == []


def test_a_specification_s_table_of_constants_is_no_verbatim_source(tmp_path: Path) -> None:
    """zstd's compression format document publishes the default distributions its decoder
    holds: the numbers are the same, the names are not, and a format's spec is what a rebuild
    is written from. A function pasted beside them still is found."""
    numbers = ", ".join(str((i * 37) % 101 - 9) for i in range(60))
    code = f"static const short DEFAULT_DIST[60] = {{ {numbers} }};\n"
    func = "int add(int left, int right) {\n    int sum = left + right;\n    return sum * scale(left);\n}\n"
    (tmp_path / "decoder.c").write_text(code + func)
    index = shingles.build_index(tmp_path, k=40)
    assert shingles.find_runs(index, f"The table:\n```\nshort dist[60] =\n  {{ {numbers} }};\n```\n") == []
    assert shingles.find_runs(shingles.build_index(tmp_path, k=20), "Code:\n" + func)
    # the names gate off: the numbers alone match
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shingles, "MIN_NAMES", 0)
        assert shingles.find_runs(shingles.build_index(tmp_path, k=40), f"{{ {numbers} }};")


def test_threshold_is_configurable(tmp_path: Path) -> None:
    body = "\n".join(f"    total = total + values[{i}] * {i};" for i in range(4))
    code = f"int sum(int *values)\n{{\n    int total = 0;\n{body}\n    return total;\n}}\n"
    (tmp_path / "sum.c").write_text(code)
    tokens = len(shingles.source_tokens(code.encode(), "c"))
    assert 30 < tokens < 80
    assert shingles.find_runs(shingles.build_index(tmp_path, k=20), "docs:\n" + code)
    assert shingles.find_runs(shingles.build_index(tmp_path, k=tokens + 1), code) == []


def test_comments_in_the_source_do_not_need_to_be_pasted(tmp_path: Path) -> None:
    code = textwrap.dedent("""\
        def scale(values, factor):
            # multiply every value by the factor
            out = []
            for value in values:  # keep the order
                out.append(value * factor)
            return [round(v, 2) for v in out if v is not None and v >= 0]
        """)
    (tmp_path / "scale.py").write_text(code)
    pasted = "\n".join(line.split("#")[0].rstrip() for line in code.splitlines())
    runs = shingles.find_runs(shingles.build_index(tmp_path, k=30), "see:\n" + pasted)
    assert len(runs) == 1 and runs[0].source_file == "scale.py"


def test_text_findings_name_the_language_and_the_source_line(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    code = (EXAMPLES / "rcalc" / "src" / "lexer.rs").read_bytes()
    (tmp_path / "src" / "lexer.rs").write_bytes(code)
    index = shingles.build_index(tmp_path)
    found = text_findings({"/tmp/notes.txt": code}, index, 0.02)
    kinds = {f.kind: f.evidence for f in found}
    assert kinds["source_file"].startswith("parses as rust")
    assert "verbatim from src/lexer.rs:" in kinds["verbatim_source"]


def test_source_hashes_skip_docs_and_mark_test_assets() -> None:
    hashes = source_hashes(EXAMPLES / "csvq")
    rels = {rel: kind for kind, rel in hashes.values()}
    assert rels["src/csv.c"] == "source_copy"
    assert rels["tests/expected/help.out"] == "hidden_test"
    assert "README.md" not in rels and "csvq.1" not in rels
