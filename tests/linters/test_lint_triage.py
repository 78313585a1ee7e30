"""The five-class triage: every class on at least three assertions, with a reason."""

from __future__ import annotations

import pytest
from lint_support import classes_of, lint

MD5_EMPTY = "d41d8cd98f00b204e9800998ecf8427e"
SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

EXAMPLES: dict[str, list[str]] = {
    "self-consistent": [
        """
        def test_roundtrip_through_program():
            data = "hello world\\n" * 50
            packed = run(["compress"], stdin=data)
            unpacked = run(["decompress"], stdin=packed.stdout)
            assert unpacked.stdout == data
        """,
        """
        def test_gzip_roundtrip(tmp_path):
            run(["gz", "in.txt"], files={"in.txt": "hello world\\n"}, cwd=tmp_path)
            assert gzip.decompress((tmp_path / "in.txt.gz").read_bytes()) == b"hello world\\n"
        """,
        """
        def test_deterministic():
            first = run(["render", "a"])
            second = run(["render", "a"])
            assert first.stdout == second.stdout
        """,
        """
        def test_json_reformat():
            doc = '{"a": [1, 2]}'
            r = run(["fmt"], stdin=doc)
            assert json.loads(r.stdout) == json.loads(doc)
        """,
        """
        import zipfile

        def test_zip_member(tmp_path):
            run(["zip", "out.zip", "a.txt"], files={"a.txt": "alpha\\n"}, cwd=tmp_path)
            with zipfile.ZipFile(tmp_path / "out.zip") as archive:
                assert archive.read("a.txt") == b"alpha\\n"
        """,
    ],
    "observable": [
        """
        def test_stdout():
            r = run(["select", "-c", "name", "in.csv"])
            assert r.stdout == "name\\nAlice\\n"
        """,
        """
        def test_golden():
            expected = (Path(__file__).parent / "golden" / "help.txt").read_text()
            assert run(["--help"]).stdout == expected
        """,
        """
        def test_error_template():
            r = run(["nope.csv"])
            assert "csvq: nope.csv: No such file" in r.stderr
        """,
        """
        def test_empty_stderr():
            r = run(["x"])
            assert r.stderr == ""
        """,
    ],
    "contract": [
        """
        def test_exit_status():
            assert run(["--bogus"]).returncode == 2
        """,
        """
        def test_count():
            r = run(["ls"])
            assert len(r.stdout.splitlines()) == 3
        """,
        """
        def test_type():
            r = run(["--json"])
            assert isinstance(json.loads(r.stdout), list)
        """,
        """
        def test_no_traceback():
            r = run(["x"])
            assert "Traceback" not in r.stderr
        """,
        """
        def test_key_present():
            r = run(["--json"])
            assert "version" in json.loads(r.stdout)
        """,
    ],
    "recall": [
        f"""
        def test_md5():
            r = run(["md5"], stdin="")
            assert r.stdout == "{MD5_EMPTY}  -\\n"
        """,
        """
        def test_base64():
            r = run(["enc"], stdin="some input the solver never saw")
            assert r.stdout.strip() == "c29tZSBpbnB1dCB0aGUgc29sdmVyIG5ldmVyIHNhdzEyMw=="
        """,
        """
        def test_codec_bytes(tmp_path):
            run(["pack", "in.txt"], cwd=tmp_path)
            assert (tmp_path / "in.txt.lz").read_bytes() == b"\\x28\\xb5\\x2f\\xfd\\x00\\x58"
        """,
        """
        def test_golden_codec(tmp_path):
            run(["brotli", "in.txt"], cwd=tmp_path)
            golden = Path(__file__).parent / "golden" / "in.txt.br"
            assert (tmp_path / "in.txt.br").read_bytes() == golden.read_bytes()
        """,
        """
        def test_digest_computed():
            r = run(["sha256"], stdin="abc")
            assert r.stdout.split()[0] == hashlib.sha256(b"abc").hexdigest()
        """,
    ],
    "pinned": [
        f"""
        def test_output_hash():
            r = run(["render"])
            assert hashlib.md5(r.stdout.encode()).hexdigest() == "{MD5_EMPTY}"
        """,
        """
        def test_rendered_png(tmp_path):
            run(["plot", "-o", "out.png"], cwd=tmp_path)
            expected = (Path(__file__).parent / "golden" / "plot.png").read_bytes()
            assert (tmp_path / "out.png").read_bytes() == expected
        """,
        """
        def test_frame_crc(tmp_path):
            run(["frame", "-o", "f.raw"], cwd=tmp_path)
            assert zlib.crc32((tmp_path / "f.raw").read_bytes()) == 0x1234ABCD
        """,
        """
        def test_png_bytes(tmp_path):
            run(["icon", "-o", "i.png"], cwd=tmp_path)
            assert (tmp_path / "i.png").read_bytes()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
        """,
    ],
}


def _params() -> list[object]:
    return [
        pytest.param(cls, src, id=f"{cls}-{i}")
        for cls, sources in EXAMPLES.items()
        for i, src in enumerate(sources)
    ]


def test_every_class_has_three_examples() -> None:
    assert set(EXAMPLES) == {"self-consistent", "observable", "contract", "recall", "pinned"}
    assert all(len(sources) >= 3 for sources in EXAMPLES.values())


@pytest.mark.parametrize(("expected", "source"), _params())
def test_triage_class(expected: str, source: str) -> None:
    result = lint(source)
    assert [a.class_ for a in result.assertions] == [expected]
    assert result.assertions[0].reason


def test_every_assertion_gets_one_class() -> None:
    source = """
    def test_many(tmp_path):
        r = run(["x"], cwd=tmp_path)
        assert r.returncode == 0
        assert r.stdout == "x\\n"
        assert len(r.stdout) == 2
        assert "Traceback" not in r.stderr
    """
    assert classes_of(source) == ["contract", "observable", "contract", "contract"]


def test_recall_reason_names_the_signal() -> None:
    reasons = [a.reason for a in lint(EXAMPLES["recall"][0]).assertions]
    assert "hex digest" in reasons[0]


def test_triage_json_uses_class_key() -> None:
    data = lint(EXAMPLES["pinned"][0]).to_json()
    item = data["assertions"][0]
    assert item["class"] == "pinned"
    assert set(item) == {"path", "test", "line", "class", "reason"}


def test_extra_roundtrip_module_makes_decode_self_consistent() -> None:
    from taskfoundry.linters import LintConfig

    source = """
    import base64

    def test_b64():
        r = run(["b64"], stdin="hello there")
        assert base64.b64decode(r.stdout) == b"hello there"
    """
    assert classes_of(source) == ["observable"]
    config = LintConfig(roundtrip_modules=["base64"])
    assert [a.class_ for a in lint(source, config).assertions] == ["self-consistent"]


@pytest.mark.parametrize(
    "source",
    [
        """
        def test_cipher_digest():
            r = run(["--encrypt", "-k", "key"], stdin="plain text")
            assert hashlib.sha256(r.stdout.encode()).hexdigest() == "0f3a"
        """,
        """
        def test_compressed_file_crc(tmp_path):
            run(["in.txt"], cwd=tmp_path)
            assert zlib.crc32((tmp_path / "in.txt.lz4").read_bytes()) == 0x1234ABCD
        """,
        """
        def test_codec_named_by_a_variable():
            argv = ["-z", "zstd", "in"]
            r = run(argv)
            assert hashlib.md5(r.stdout.encode()).hexdigest() == "d41d8cd98f00b204e9800998ecf8427e"
        """,
    ],
)
def test_digest_of_codec_output_is_recall_not_pinned(source: str) -> None:
    (item,) = lint(source).assertions
    assert item.class_ == "recall" and "cipher, codec or compressor" in item.reason


def test_codec_words_in_stdin_do_not_make_output_a_codec_s() -> None:
    source = """
    def test_hash_of_render():
        r = run(["render"], stdin="encrypt compress")
        assert hashlib.md5(r.stdout.encode()).hexdigest() == "d41d8cd98f00b204e9800998ecf8427e"
    """
    assert classes_of(source) == ["pinned"]
