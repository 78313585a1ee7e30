import shutil

import pytest

from taskfoundry.kinds.program.testgen.docexamples import Example, doc_examples, parse_invocation

NAMES = {"jsonxf"}


def test_pipes_and_redirections_become_stdin() -> None:
    assert parse_invocation("jsonxf -t $'\\t' <foo.json | less", NAMES) == Example(
        ("-t", "\t"), stdin_file="foo.json"
    )
    assert parse_invocation("echo '{\"a\": 1}' | jsonxf -m", NAMES) == Example(("-m",), stdin='{"a": 1}\n')
    assert parse_invocation("cat in.json | jsonxf", NAMES) == Example((), stdin_file="in.json")
    assert parse_invocation("jsonxf -m <foo.json | gzip -c >foo.gz", NAMES) == Example(
        ("-m",), stdin_file="foo.json"
    )


def test_prompts_paths_and_fd_redirections() -> None:
    assert parse_invocation("$ ./jsonxf -s '[1]' 2>/dev/null", NAMES) == Example(("-s", "[1]"))
    assert parse_invocation("other -x", NAMES) is None
    assert parse_invocation("jsonxf 'unterminated", NAMES) is None
    assert parse_invocation("jsonxf <<EOF", NAMES) is None


def test_doc_examples_reads_fenced_and_indented_blocks_once() -> None:
    readme = "Run it:\n\n    jsonxf -m\n\n```sh\n$ jsonxf -m\njsonxf -s x\n```\nprose jsonxf -q\n"
    assert doc_examples([readme], NAMES) == [Example(("-m",)), Example(("-s", "x"))]


def test_corpus_takes_option_values_from_usage_and_examples(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from taskfoundry.kinds.program.testgen.inputs import build_corpus

    (tmp_path / "README.md").write_text("    hexyl --skip 16 data.bin\n")
    usage = "  -n, --length <N>\n      Examples: --length=64, --length=0xff.\n"
    corpus = build_corpus(tmp_path, {"hexyl"}, usage=[usage])
    assert corpus.option_values["--length"] == ["64", "0xff"]
    assert corpus.option_values["--skip"] == ["16"]
    assert corpus.examples == [Example(("--skip", "16", "data.bin"))]


def test_values_by_metavar_type() -> None:
    import random

    from taskfoundry.kinds.program.testgen.inputs import Corpus, values_for
    from taskfoundry.kinds.program.testgen.usage import Option

    corpus = Corpus(data_names=["banner", "big", "standard"])
    rng = random.Random(0)
    width = values_for(Option(("-w",), "OUTPUTWIDTH"), corpus, rng)
    assert {"0", "1", "80", "-1"} <= set(width)
    font = values_for(Option(("-f",), "FONTFILE"), corpus, rng)
    assert {"banner", "big", "standard"} <= set(font)
    assert not {"banner", "80"} & set(values_for(Option(("-q",), "QUOTE"), corpus, rng))


# an mdoc(7) page and a man(7) page, as projects ship them in man/
MDOC_PAGE = (
    ".Dd $Mdocdate$\n.Dt TOOL 1\n.Os\n.Sh NAME\n.Nm tool\n.Nd convert notes\n.Sh DESCRIPTION\n"
    ".Bl -tag -width Ds\n.It Fl s\nStandalone, for\n.Fl T Ns Ar html\nand\n.Fl T Ns Ar latex .\n"
    ".It Fl T Ar mode\nThe output mode.\n.It Fl -parse-maxdepth Ns = Ns Ar depth\nThe depth.\n.El\n"
    ".Sh EXAMPLES\n.Dl tool -Tterm notes.md | less -R\n.Bd -literal -offset indent\n"
    "tool -sTman notes.md | mandoc\n.Ed\n"
)
MAN_PAGE = (
    ".TH GNU 1\n.SH NAME\ngnu \\- a tool\n.SH OPTIONS\n.TP\n\\fB\\-w\\fR, \\fB\\-\\-width\\fR=\\fINUM\\fR\n"
    "set the width\n.TP\n.B \\-q\nquiet\n.SH EXAMPLE\n.nf\ngnu \\-w 3 in.txt\n.fi\n"
)


def test_a_man_page_gives_examples_and_option_values(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """lowdown names its output modes only in its man page (`-Thtml`, `.Dl lowdown -Tterm`)."""
    from taskfoundry.kinds.program.testgen.inputs import build_corpus

    (tmp_path / "man").mkdir()
    (tmp_path / "man/tool.1").write_text(MDOC_PAGE)
    (tmp_path / "man/libtool.3").write_text(".Dl tool -X from-a-library-page\n")  # section 3: no program
    (tmp_path / "gnu.1").write_text(MAN_PAGE)
    corpus = build_corpus(tmp_path, {"tool", "gnu"})
    assert corpus.option_values["-T"] == ["html", "latex"]
    assert corpus.examples == [  # the top directory's pages first
        Example(("-w", "3", "in.txt")),
        Example(("-Tterm", "notes.md")),
        Example(("-sTman", "notes.md")),
    ]


@pytest.mark.skipif(shutil.which("groff") is None, reason="the man page is rendered by groff")
def test_a_man_page_s_option_list_joins_the_help_text_s(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from taskfoundry.kinds.program.testgen.manpage import man_options
    from taskfoundry.kinds.program.testgen.usage import Option, parse_usage, with_options

    (tmp_path / "man").mkdir()
    (tmp_path / "man/tool.1").write_text(MDOC_PAGE)
    (tmp_path / "gnu.1").write_text(MAN_PAGE)
    found = {o.flags: o.metavar for o in man_options(tmp_path)}
    assert found == {
        ("-s",): None,
        ("-T",): "mode",
        ("--parse-maxdepth",): "depth",
        ("-w", "--width"): "NUM",
        ("-q",): None,
    }
    usage = with_options(parse_usage("usage: tool [-s] [-t mode]\n"), man_options(tmp_path))
    flags = [o.flags for o in usage.options]
    assert flags[:2] == [("-s",), ("-t",)] and ("-T",) in flags  # the help's own first
    assert flags.count(("-s",)) == 1 and usage.options[0] == Option(("-s",))  # not added twice
