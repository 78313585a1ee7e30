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
