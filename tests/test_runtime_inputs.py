"""Inputs inferred from runtime data (names by family, zipped/gzipped/cut copies) and the
explorer's adaptive probe budget."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import random
import time
import zipfile
import zlib
from pathlib import Path

from taskfoundry.kinds.program.settings import ExplorerConfig
from taskfoundry.kinds.program.testgen.explorer import Explorer, Kept
from taskfoundry.kinds.program.testgen.inputs import Corpus, values_for
from taskfoundry.kinds.program.testgen.probes import Outcome, Probe, RunnerJob
from taskfoundry.kinds.program.testgen.runtime_inputs import data_dirs, data_names, variants
from taskfoundry.kinds.program.testgen.usage import Option, Usage

FONT = b"flf2a$ 4 3 10 0 1\ncomment\n" + b" $@\n _$@\n|_|$@\n$@@\n" * 3
PATHS = [f"usr/local/share/figlet/{n}.flf" for n in ("big", "mini", "small", "standard", "term")] + [
    "usr/local/share/figlet/646-de.flc",
    "usr/local/share/figlet/utf8.flc",
]


def test_names_interleave_families_so_a_short_sample_holds_each_kind() -> None:
    names = data_names(PATHS)
    assert sorted(names) == ["646-de", "big", "mini", "small", "standard", "term", "utf8"]
    # one control file (.flc) and one font (.flf) among the first two, despite 5 fonts to 2
    assert {names[0], names[1]} == {"646-de", "big"}


def test_a_directory_option_gets_where_the_data_is_installed() -> None:
    dirs = data_dirs([*PATHS, "usr/local/share/doc-extra/x.txt"])
    assert dirs == ["/usr/local/share/figlet", "/usr/local/share/doc-extra"]
    corpus = Corpus(data_dirs=dirs)
    values = values_for(Option(("-d",), "FONTDIRECTORY"), corpus, random.Random(0))
    assert {"/usr/local/share/figlet", "."} <= set(values)


def _member(packed: str | bytes, name: str) -> tuple[int, bytes]:
    assert isinstance(packed, bytes) and packed.startswith(b"PK\x03\x04")
    with zipfile.ZipFile(io.BytesIO(packed)) as archive:
        assert archive.namelist() == [name] and archive.testzip() is None  # the CRC holds
        return archive.getinfo(name).compress_type, archive.read(name)


def _block(packed: bytes, name: str, data: bytes) -> int:
    """The first deflate block's type (0 stored, 1 fixed, 2 dynamic) of the member's stream."""
    start = 30 + len(name)
    assert zlib.decompressobj(-15).decompress(packed[start:]) == data
    return (packed[start] >> 1) & 3  # BFINAL is bit 0, BTYPE bits 1-2 of the first byte


def test_variants_are_the_data_zipped_gzipped_and_cut() -> None:
    copies = variants("mini.flf", FONT)
    assert sorted(copies) == [
        "mini-badutf8.flf", "mini-cut.flf", "mini-stored.flf", "mini-wide.flf", "mini-zip.flf",
        "mini-zip0.flf", "mini-zipcut.flf", "mini-zipfixed.flf", "mini.flf.gz",
    ]  # fmt: skip
    assert _member(copies["mini-stored.flf"], "mini.flf") == (zipfile.ZIP_STORED, FONT)
    for name, block in (("mini-zip0.flf", 0), ("mini-zipfixed.flf", 1)):
        assert _member(copies[name], "mini.flf") == (zipfile.ZIP_DEFLATED, FONT)
        assert _block(copies[name], "mini.flf", FONT) == block, name  # type: ignore[arg-type]
    # zlib picks fixed tables for a small file, dynamic ones for a large file (hence both sizes)
    big = FONT + bytes(range(32, 127)) * 40
    assert _block(variants("big.flf", big)["big-zip.flf"], "big.flf", big) == 2  # type: ignore[arg-type]
    cut = copies["mini-zipcut.flf"]
    assert isinstance(cut, bytes) and copies["mini-zip.flf"].startswith(cut)  # type: ignore[union-attr]
    assert len(cut) < len(copies["mini-zip.flf"])
    assert gzip.decompress(copies["mini.flf.gz"]) == FONT  # type: ignore[arg-type]
    cut_text = copies["mini-cut.flf"]
    assert isinstance(cut_text, str) and FONT.decode().startswith(cut_text) and len(cut_text) < len(FONT)
    assert variants("mini.flf", FONT) == copies  # same data, same bytes (no timestamps)
    assert "blob-cut.bin" not in variants("blob.bin", b"\xff\xfe\n\x00\n\x01\n\x02\n")


def test_wide_and_not_utf8_copies_keep_the_header_and_reach_every_sequence_length() -> None:
    copies = variants("mini.flf", FONT)
    wide = copies["mini-wide.flf"]
    assert isinstance(wide, str) and wide.splitlines()[0] == "flf2a$ 4 3 10 0 1"
    assert "@" not in wide and {"é", "€", "𝄞"} <= set(wide)  # the end mark, the commonest symbol
    assert {len(c.encode()) for c in wide if ord(c) > 127} == {2, 3, 4}
    bad = copies["mini-badutf8.flf"]
    assert isinstance(bad, bytes) and bad.startswith(b"flf2a$ 4 3 10 0 1\n")
    for line in bad.splitlines()[1:]:
        try:
            text = line.decode()
        except UnicodeDecodeError:
            continue
        assert text.startswith("\ufffe"), f"{line!r} is UTF-8"  # a noncharacter: valid, refused


def test_data_options_get_installed_names_and_copies_which_probes_carry() -> None:
    corpus = Corpus(data_names=data_names(PATHS), data_files=variants("mini.flf", FONT))
    values = values_for(Option(("-f",), "FONTFILE"), corpus, random.Random(0))
    assert {"646-de", "big"} <= set(values)
    assert not {"646-de", "mini-zip"} & set(values_for(Option(("-w",), "WIDTH"), corpus, random.Random(0)))
    every = corpus.data_values()
    assert {"mini-zip.flf", "mini-zip", "mini.flf.gz", "mini.flf", "mini-cut"} <= set(every)
    files = dict(corpus.input_files(("-f", "mini-zip", "hello")))
    assert list(files) == ["mini-zip.flf"] and files["mini-zip.flf"] == corpus.data_files["mini-zip.flf"]


def test_a_binary_input_file_travels_as_base64() -> None:
    probe = Probe(("-f", "x.flf"), files=(("x.flf", b"PK\x03\x04\xff"),))
    job = probe.to_job("p0")
    assert job["files"] == {"x.flf": {"b64": base64.b64encode(b"PK\x03\x04\xff").decode()}}
    assert probe.key != Probe(("-f", "x.flf"), files=(("x.flf", b"PK\x03\x04\xfe"),)).key


def _spent(config: ExplorerConfig, runs: int, last_gain: int) -> str | None:
    explorer = Explorer(config, RunnerJob(executable="/bin/true"), "/bin/true")
    explorer.state.probes_run, explorer._last_gain = runs, last_gain
    explorer._budget_spent(start=float("inf"))  # time never runs out
    return explorer.state.exhausted


def test_probe_budget_grows_while_coverage_grows() -> None:
    config = ExplorerConfig(max_probes=600, patience=0.25, growth=5)
    assert _spent(config, runs=400, last_gain=0) is None  # under max_probes
    assert _spent(config, runs=700, last_gain=650) is None  # past it, still reaching new lines
    assert _spent(config, runs=800, last_gain=650) == "probes"  # 150 probes without a new line
    assert _spent(config, runs=3000, last_gain=3000) == "probes"  # the ceiling: 600 × 5
    assert _spent(ExplorerConfig(max_probes=40, patience=0), runs=40, last_gain=40) == "probes"


def test_the_time_budget_counts_checking_the_kept_tests_on_the_gold() -> None:
    """ufomerge: 3 s a probe, and after exploring the gold ran every kept test twice; the source's
    30 minutes ran out in generate. 3 s calls one at a time, 300 s in: 50 kept need 300 s more
    (twice each), 100 kept 600, which the 900 s budget has no room for."""
    job = RunnerJob(executable="/bin/true", parallel=1)
    explorer = Explorer(ExplorerConfig(max_seconds=900), job, "/bin/true")
    explorer.state.probes_run = 100
    start = time.monotonic() - 300
    slow = dataclasses.replace(_outcome("x\n", {1}), seconds=3.0)
    explorer.state.kept = [Kept(Probe((str(i),)), slow, "f") for i in range(50)]
    assert not explorer._budget_spent(start)
    explorer.state.kept *= 2
    assert explorer._budget_spent(start) and explorer.state.exhausted == "time"


def _outcome(text: str, lines: set[int]) -> Outcome:
    return Outcome(0, text, "", False, False, {}, covered={"a.c": lines}, total={"a.c": set(range(1, 50))})


def test_option_combinations_alone_fill_only_their_share_of_the_tests() -> None:
    explorer = Explorer(ExplorerConfig(max_feature_tests=2), RunnerJob(executable="/bin/true"), "/bin/true")
    flags = ["-a", "-b", "-c", "-d"]
    batch = [Probe((flag, "x")) for flag in flags] + [Probe(("-e", "x"))]
    outcomes = [_outcome(f"rendered {i}\n", {1, 2}) for i in range(4)] + [_outcome("more\n", {1, 2, 3})]
    explorer._absorb(batch, outcomes)
    kept = [k.probe.args[0] for k in explorer.state.kept]
    # the first reaches lines 1-2; two more for their flags alone; -e for its new line 3
    assert kept == ["-a", "-b", "-c", "-e"]
    assert [k.new_lines for k in explorer.state.kept] == [2, 0, 0, 1]


def test_outputs_come_back_as_inputs_and_data_copies_ride_along() -> None:
    corpus = Corpus(data_names=["big"], data_files=variants("mini.flf", FONT))
    corpus.add_output(Probe(("-c",), stdin="hi\n"), _outcome(" _  _\n|_||_\n", {1}))
    corpus.add_output(Probe(("-c",), stdin="same\n"), _outcome("same\n", {1}))  # an echo of its input
    corpus.add_output(Probe(()), Outcome(1, "usage: x\n", "", False, False, {}))  # an error
    assert corpus.outputs == [" _  _\n|_||_\n"]
    explorer = Explorer(ExplorerConfig(seed=3), RunnerJob(executable="/bin/true"), "/bin/true")
    usage = Usage(options=[Option(("-f",), "FONTFILE")])
    probes = [explorer._random_probe([()], {"": usage}, usage, corpus) for _ in range(300)]
    assert any(p.origin == "output" and p.stdin == corpus.outputs[0] for p in probes)
    for probe in probes:  # a probe naming a copy of the data carries it, whatever its stdin
        named = {a for a in probe.args if a.startswith("mini")}
        assert all({n, n.rsplit(".", 1)[0]} & named for n, _ in probe.files)
        assert len(probe.files) == len(named)
    assert any(p.files and p.stdin for p in probes)


def test_guided_neighbours_move_numbers_and_reshape_input_by_one_line() -> None:
    from taskfoundry.kinds.program.mutate.guided import line_variants, neighbours

    text = "a 1\nb 2\nc 3\n"
    assert line_variants(text) == [
        "b 2\nc 3\n",
        "a 1\nb 2\n",
        "a 1\na 1\nb 2\nc 3\n",
        "c 3\na 1\nb 2\n",
        "a 1\nb 2\nc 3",
        "",
    ]
    probe = Probe(("top", "-n", "2"), stdin=text, files=(("blob.bin", b"\x00\x01"),))
    found = neighbours(probe)
    args = {p.args for p in found}
    assert ("top", "-n", "3") in args and ("top", "-n", "1") in args  # a number moved by one
    stdins = {p.stdin for p in found}
    assert {"a 1\nb 2\n", "a 1\na 1\nb 2\nc 3\n"} <= stdins  # the input one line away
    wide = neighbours(Probe(("-f", "big", "Hi 2")), limit=40)
    assert {("-f", "big", "éi 2"), ("-f", "big", "€i 2"), ("-f", "big", "𝄞i 2")} <= {p.args for p in wide}
    assert not any(p.args[0] != "-f" for p in wide)  # an option's name is not varied
    assert len(found) <= 20 and all(p.files == probe.files for p in found)  # binary files kept as they are


def test_sample_files_take_test_dir_then_top_documents(tmp_path: Path) -> None:
    from taskfoundry.kinds.program.testgen.inputs import sample_files

    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "regression.txt").write_text("# heading\n")
    (tmp_path / "test" / "spec.txt").write_text("x" * 20_000)  # too big to be one probe's input
    (tmp_path / "README.md").write_text("*emphasis* and `code`\n")
    (tmp_path / "notes.md").write_text("- a list\n")
    (tmp_path / "main.c").write_text("int main(void);\n")
    (tmp_path / "tests" / "documents").mkdir(parents=True)
    (tmp_path / "tests" / "documents" / "sample.xml").write_text("<a><b/></a>\n")  # xml-rs's inputs
    found = sample_files(tmp_path)
    assert list(found) == ["tests/documents/sample.xml", "test/regression.txt", "README.md", "notes.md"]
    assert found["README.md"] == "*emphasis* and `code`\n"
    assert list(sample_files(tmp_path, limit=1)) == ["tests/documents/sample.xml"]  # samples first


def test_a_regress_directory_holds_sample_inputs(tmp_path: Path) -> None:
    """lowdown keeps its Markdown cases in regress/ (BSD projects' name for their tests)."""
    from taskfoundry.kinds.program.testgen.inputs import sample_files

    (tmp_path / "regress").mkdir()
    (tmp_path / "regress" / "emphasis.md").write_text("*a* and **b**\n")
    assert list(sample_files(tmp_path)) == ["regress/emphasis.md"]


def test_a_program_named_for_a_format_its_tree_lacks_gets_documents_of_it(tmp_path: Path) -> None:
    """xml-rs ships no XML: xml-analyze was fed none and kept 39 tests. Parsed here, each
    drawn document is one of the format, and the same seed draws the same ones."""
    import configparser
    import json
    import xml.dom.minidom

    from taskfoundry.kinds.program.testgen.inputs import build_corpus

    corpus = build_corpus(tmp_path, {"xml-analyze"}, seed=3, usage=["Usage: xml-analyze [OPTIONS] <FILE>"])
    docs = {n: t for n, t in corpus.files.items() if n.endswith(".xml")}
    assert len(docs) == 8 and len(set(docs.values())) > 4
    assert all(xml.dom.minidom.parseString(t.encode()) for t in docs.values())
    assert docs == {n: t for n, t in build_corpus(tmp_path, {"xml-analyze"}, seed=3).files.items()}
    ini = build_corpus(tmp_path, {"tox-ini-fmt"}, usage=["usage: tox-ini-fmt [-h] tox_ini"]).files
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    for text in ini.values():
        parser.read_string(text)
    assert len(ini) == 8 and all(n.endswith(".ini") for n in ini)
    assert all(
        json.loads(t) is not ... for t in build_corpus(tmp_path, {"jq"}, usage=["jq - JSON"]).files.values()
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "one.xml").write_text("<a/>\n")  # the tree's own: nothing drawn
    assert list(build_corpus(tmp_path, {"xml-analyze"}).files) == ["tests/one.xml"]
    hexyl = build_corpus(tmp_path, {"hexyl"}, usage=["hexyl [OPTIONS] [FILE]\n--format json"]).files
    assert list(hexyl) == ["tests/one.xml"]  # JSON as an option's value, not in its name or usage line


def test_a_constant_mutants_two_values_are_tried_as_a_number_and_as_a_character() -> None:
    from taskfoundry.kinds.program.mutate.guided import boundary_values, neighbours
    from taskfoundry.mutation.operators import Mutant

    moved = Mutant("src/utf8.c", 261, "constant", 0, 4, "1470", "1471")
    assert boundary_values(moved) == (1470, 1471)
    assert boundary_values(Mutant("a.c", 1, "constant", 0, 5, "0x800", "0x801")) == (0x800, 0x801)
    assert boundary_values(Mutant("a.c", 1, "relational", 0, 1, "<", "<=")) == ()
    found = neighbours(Probe(("-w", "80"), stdin="**foo** 3\n"), limit=40, values=(1470, 1471))
    stdins, args = {p.stdin for p in found}, {p.args for p in found}
    assert {"**\u05beoo** 3\n", "**\u05bfoo** 3\n", "**foo** 1470\n"} <= stdins
    assert ("-w", "1471") in args and ("-w", "81") in args  # the value, and the number moved by one


def test_a_character_value_goes_where_its_class_shows_next_to_a_delimiter_or_a_wide_letter() -> None:
    from taskfoundry.kinds.program.mutate.guided import neighbours, value_variants

    # CommonMark: `a*b*` is emphasis, `a*"b"*` not (`"` is punctuation): a delimiter's neighbour
    found = value_variants("# A a*bc* ñ\n", (0x589, 0x58A))
    assert "# A a*\u0589c* ñ\n" in found and "# A a*\u058ac* ñ\n" in found  # the first after a mark
    assert "# A \u0589*bc* ñ\n" in found  # the first letter before a mark
    assert "# A a*bc* \u058a\n" in found  # the first character beyond ASCII, where a table was read
    assert "# \u0589 a*bc* ñ\n" in found  # the first letter
    assert "\u0589 A a*bc* ñ\n" in found and "# A a\u0589bc* ñ\n" in found  # the first two marks
    assert value_variants("x 7\n", (0xD800,)) == ["x 55296\n"]  # a surrogate is no character
    # in a probe, its input first: the guided step takes each parent's first neighbours
    first = neighbours(Probe(("--to", "html"), stdin="a*bc*\n"), values=(0x589, 0x58A))[:2]
    assert [p.stdin for p in first] == ["a*\u0589c*\n", "a*\u058ac*\n"]
    inner = value_variants("# *foo* foo*bar*\n", (0x589,))  # inside a word first
    assert inner[0] == "# *foo* foo*\u0589ar*\n" and "# *\u0589oo* foo*bar*\n" in inner


def test_a_file_over_the_cap_gives_only_its_compressed_copies_under_it() -> None:
    from taskfoundry.kinds.program.testgen.runtime_inputs import MAX_DATA_BYTES

    rng = random.Random(1)
    lines = ["".join(rng.choice(" _|/\\()@") for _ in range(rng.randint(4, 20))) + "@\n" for _ in range(9000)]
    big = ("flf2a$ 8 6 20 0 1\n" + "".join(lines)).encode()
    assert MAX_DATA_BYTES < len(big)
    copies = variants("big.flf", big)
    assert {"big-zip.flf", "big-zipcut.flf", "big.flf.gz"} <= set(copies)
    assert not {"big-stored.flf", "big-zip0.flf", "big-wide.flf", "big-cut.flf"} & set(copies)
    assert all(len(c) <= MAX_DATA_BYTES for c in copies.values())
    assert _member(copies["big-zip.flf"], "big.flf") == (zipfile.ZIP_DEFLATED, big)
