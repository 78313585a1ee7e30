"""Files the docs show whole, as a program reads them from where it runs."""

from __future__ import annotations

from pathlib import Path

from taskfoundry.kinds.program.testgen.docfiles import KEEP, MAX_FILES, documented_files, rooted, shown_files
from taskfoundry.kinds.program.testgen.explorer import in_place
from taskfoundry.kinds.program.testgen.probes import Probe

_PAGE = """# Configuration

An example `toy-config.json` file may look like this:
```json
{"Suites": {"sid": {"sections": ["main"]}}}
```

Then run it from that directory:
```sh
toy run sid
```
"""


def test_a_block_after_a_sentence_naming_the_file_is_the_file() -> None:
    assert shown_files(_PAGE) == {"toy-config.json": '{"Suites": {"sid": {"sections": ["main"]}}}\n'}


def test_a_block_not_in_the_named_format_is_not_the_file() -> None:
    # a shell session right after a sentence that names a JSON file
    page = "Write `toy-config.json`, then:\n```sh\ntoy run sid\n```\n"
    assert shown_files(page) == {}
    assert shown_files("Put this in `app.toml`:\n```\nname = [\n```\n") == {}
    assert shown_files("Put this in `app.toml`:\n```toml\nname = 'x'\n```\n") == {"app.toml": "name = 'x'\n"}


def test_only_a_near_relative_name_counts_and_the_nearest_wins() -> None:
    far = "Write `a.yaml`.\n\none\n\ntwo\n\nthree\n```yaml\nkey: 1\n```\n"
    assert shown_files(far) == {}
    assert shown_files("The file /etc/toy.yaml holds:\n```yaml\nkey: 1\n```\n") == {}
    assert shown_files("Copy `../up.yaml`:\n```yaml\nkey: 1\n```\n") == {}
    two = "Not `old.json` but `conf/new.json`:\n```json\n[1]\n```\n"
    assert shown_files(two) == {"conf/new.json": "[1]\n"}
    assert shown_files("See `data.json.gz`:\n```json\n[1]\n```\n") == {}
    assert shown_files("In `changelog.yaml/changelog.yml`:\n```yaml\nk: 1\n```\n") == {}


def test_documented_files_reads_the_readme_and_the_docs_pages(tmp_path: Path) -> None:
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "README.md").write_text("Settings go in `b.ini`:\n```ini\n[main]\nx = 1\n```\n")
    (tmp_path / "docs" / "config.md").write_text(_PAGE)
    blocks = "".join(f"`f{i}.yaml`:\n```yaml\nk: {i}\n```\n" for i in range(6))
    (tmp_path / "docs" / "guide" / "more.md").write_text(blocks)
    found = documented_files(tmp_path)
    assert list(found) == ["b.ini", "toy-config.json", "f0.yaml", "f1.yaml"] and len(found) == MAX_FILES


def test_shown_files_join_a_probe_but_never_replace_its_own() -> None:
    probe = Probe(("show", "toy-config.json"), files=(("toy-config.json", "{}"),), origin="file")
    placed = in_place(probe, {"toy-config.json": "[1]", "b.ini": "[s]"})
    assert placed.files == (("toy-config.json", "{}"), ("b.ini", "[s]")) and placed.origin == "file"


def test_a_directory_of_the_authors_machine_is_made_relative_beside_the_file() -> None:
    """appstream-generator's example config names `/srv/archive.tanglu.org/tanglu/`: every call
    ended at "Directory ... does not exist". The system's own directories and URLs stay."""
    body = (
        '{"ArchiveRoot": "/srv/archive.tanglu.org/tanglu/", "Sub": "/srv/archive.tanglu.org/tanglu/pool/",\n'
        ' "Icons": "/usr/share/icons/", "Media": "http://a.org/as/", "Key": "/srv/a.key"}\n'
    )
    files = rooted("conf/asgen-config.json", body)
    assert files["conf/asgen-config.json"] == (
        '{"ArchiveRoot": "srv/archive.tanglu.org/tanglu/", "Sub": "srv/archive.tanglu.org/tanglu/pool/",\n'
        ' "Icons": "/usr/share/icons/", "Media": "http://a.org/as/", "Key": "/srv/a.key"}\n'
    )
    assert set(files) - {"conf/asgen-config.json"} == {
        f"srv/archive.tanglu.org/tanglu/{KEEP}",
        f"srv/archive.tanglu.org/tanglu/pool/{KEEP}",
    }
    assert rooted("a.ini", "[main]\nroot = /data/x/\n") == {
        "a.ini": "[main]\nroot = data/x/\n",
        f"data/x/{KEEP}": "",
    }
    assert rooted("a.yaml", "root: /var/lib/toy/\n") == {"a.yaml": "root: /var/lib/toy/\n"}
