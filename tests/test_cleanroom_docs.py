from pathlib import Path

from taskfoundry.kinds.program.cleanroom.docs import collect_docs


def test_usage_docs_only(tmp_path: Path) -> None:
    files = {
        "README.md": "# tool\n\n```sh\ntool -x\n```\n\n```c\nint main(void) { return 0; }\n```\n",
        "man/CMakeLists.txt": "install(FILES tool.1 DESTINATION man1)\n",
        "man/man1/tool.1": ".TH TOOL 1\n.SH NAME\ntool \\- does things\n",
        "man/man3/libtool.3": ".TH LIBTOOL 3\n.SH SYNOPSIS\nint tool_run(const char *s);\n",
        "doc/Makefile": "all:\n\ttrue\n",
        "doc/Makefile.am": "info_TEXINFOS = tool.texi\n",
        "doc/api.3": ".TH API 3\n",
        "doc/guide.txt": "Run tool -x to do x.\n",
        "doc/CHANGELOG.md": "1.0: first\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    docs = collect_docs(tmp_path)
    assert sorted(docs) == ["README.md", "doc/guide.txt", "man/man1/tool.1"]
    assert "tool -x" in docs["README.md"] and "int main" not in docs["README.md"]


def test_rst_code_directives_are_removed() -> None:
    from taskfoundry.kinds.program.cleanroom.docs import strip_code_blocks

    rst = (
        "..  code-block:: python\n\n    def parse(sql):\n        return sql\n\nUsage:\n\n"
        ".. code-block:: console\n\n    $ sqlformat -k upper x.sql\n\n"
        "  .. literalinclude:: ../src/main.c\n\nEnd.\n"
    )
    out = strip_code_blocks(rst)
    assert "def parse" not in out and "literalinclude" not in out
    assert "$ sqlformat -k upper x.sql" in out and out.endswith("End.\n")
