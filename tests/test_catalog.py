"""The catalog over task directories written with the project's models: no Docker, no Prefect."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from taskfoundry.catalog import Catalog, DockerUnavailable, ReleaseError
from taskfoundry.catalog.release import check_release, make_release
from taskfoundry.cli import main
from taskfoundry.errors import ConfigError
from taskfoundry.flows.index import BenchmarkIndex, IndexEntry
from taskfoundry.models import save_json

from catalog_support import sample_out, write_task


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return sample_out(tmp_path / "out")


def test_records_are_read_from_task_yaml_and_tests_json(out: Path) -> None:
    cat = Catalog.load(out)
    assert len(cat) == 5 and cat.errors == []
    assert cat.ids() == sorted(cat.ids())
    beta = cat.get("acme__beta.bbbbbbb")
    assert (beta.kind, beta.language, beta.difficulty, beta.tests, beta.branches) == (
        "program",  # no `kind:` in its task.yaml
        "rust",
        "medium",
        5,
        1,
    )
    assert beta.cleanroom_image == "taskfoundry/acme_1776_beta.bbbbbbb:task_cleanroom"
    assert beta.image == "taskfoundry/acme_1776_beta.bbbbbbb:task"
    assert beta.mutation_score is None and beta.task_dir == (out / "tasks" / beta.task_id).resolve()
    gamma = cat.get("acme__gamma.ccccccc")
    assert gamma.kind == "function" and gamma.mutation_score == 0.75
    with pytest.raises(ConfigError, match="no task 'nope'"):
        cat.get("nope")


def test_a_tasks_folder_loads_like_its_out_folder(out: Path) -> None:
    assert Catalog.load(out / "tasks").tasks() == Catalog.load(out).tasks()


def test_filters_each_return_a_catalog(out: Path) -> None:
    cat = Catalog.load(out)
    assert cat.filter(language="rust").ids() == ["acme__beta.bbbbbbb", "zeta__eps.eeeeeee"]
    assert cat.filter(language=["go", "rust"], difficulty="hard").ids() == ["acme__gamma.ccccccc"]
    assert cat.filter(kind="feature").ids() == ["zeta__delta.ddddddd"]
    assert cat.filter(kind=("program",)).filter(language="c").ids() == ["acme__alpha.aaaaaaa"]
    assert cat.filter(ids=["zeta__eps.eeeeeee", "absent"]).ids() == ["zeta__eps.eeeeeee"]
    assert len(cat.filter(language="cobol")) == 0
    # dates cut on released (else created); before is strict, after inclusive
    assert cat.filter(released_before=date(2024, 12, 31)).ids() == ["acme__alpha.aaaaaaa"]
    assert cat.filter(released_before="2024-12-31").ids() == ["acme__alpha.aaaaaaa"]
    with pytest.raises(ConfigError, match="not an ISO date: 'soon'"):
        cat.filter(released_after="soon")
    after = cat.filter(released_after=datetime(2025, 6, 1, tzinfo=UTC)).ids()
    assert after == ["acme__gamma.ccccccc", "zeta__delta.ddddddd"]  # the naive date is read as UTC
    assert cat.limit(2).ids() == cat.ids()[:2] and len(cat.limit(0)) == 0
    with pytest.raises(ConfigError):
        cat.limit(-1)


def test_release_dates_come_from_the_index(out: Path) -> None:
    index = BenchmarkIndex(
        tasks={
            "zeta__eps.eeeeeee": IndexEntry(
                task_id="zeta__eps.eeeeeee",
                source="s",
                commit="c",
                created_at=datetime(2025, 1, 1, tzinfo=UTC),
                released_at=datetime(2020, 5, 5, tzinfo=UTC),
            )
        }
    )
    save_json(out / "index.json", index)
    cat = Catalog.load(out)
    assert cat.get("zeta__eps.eeeeeee").released_at == datetime(2020, 5, 5, tzinfo=UTC)
    assert cat.filter(released_before=date(2021, 1, 1)).ids() == ["zeta__eps.eeeeeee"]


def test_breakdowns_count_by_field(out: Path) -> None:
    cat = Catalog.load(out)
    assert cat.breakdown("kind") == {"program": 3, "feature": 1, "function": 1}
    assert cat.breakdown("language") == {"c": 2, "rust": 2, "go": 1}
    assert cat.filter(language="rust").breakdown("difficulty") == {"easy": 1, "medium": 1}
    assert sum(cat.breakdown("difficulty").values()) == len(cat)
    with pytest.raises(ConfigError, match="cannot break down by 'stats'"):
        cat.breakdown("stats")


def test_dump_and_load_round_trip(out: Path, tmp_path: Path) -> None:
    cat = Catalog.load(out).filter(language=["c", "go"])
    dump = cat.dump(tmp_path / "d" / "tasks.jsonl")
    assert len(dump.read_text().splitlines()) == 3
    again = Catalog.load(dump)
    assert again.tasks() == cat.tasks()
    listed = tmp_path / "tasks.json"
    listed.write_text(json.dumps(cat.as_json()))
    assert Catalog.load(listed).tasks() == cat.tasks()


def test_a_bad_dump_line_is_named_and_the_rest_load(out: Path, tmp_path: Path) -> None:
    dump = Catalog.load(out).dump(tmp_path / "tasks.jsonl")
    lines = dump.read_text().splitlines()
    lines[1] = '{"task_id": "broken"}'
    dump.write_text("\n".join(lines) + "\n")
    cat = Catalog.load(dump)
    assert len(cat) == 4 and [e.path for e in cat.errors] == [f"{dump}:2"]
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(ConfigError, match="not a tasks folder"):
        Catalog.load(tmp_path / "x.txt")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        Catalog.load(tmp_path / "bad.json")


@pytest.mark.parametrize(
    "text",
    ["repository: [unclosed\n", "- a list\n", "repository: x\ncommit: y\n"],
    ids=["bad-yaml", "not-a-mapping", "missing-fields"],
)
def test_a_malformed_task_yaml_is_named_and_the_others_load(out: Path, text: str) -> None:
    bad = out / "tasks" / "acme__beta.bbbbbbb" / "task.yaml"
    bad.write_text(text)
    cat = Catalog.load(out)
    assert len(cat) == 4 and "acme__beta.bbbbbbb" not in cat
    (error,) = cat.errors
    assert error.path == str(bad) and str(bad) in error.message
    result = CliRunner().invoke(main, ["tasks", str(out), "--format", "json"])
    assert result.exit_code == 0
    assert f"left out {bad}" in result.stderr
    assert [r["task_id"] for r in json.loads(result.stdout)] == cat.ids()


def test_a_task_whose_id_is_not_its_folder_is_left_out(out: Path) -> None:
    shutil.move(out / "tasks" / "zeta__eps.eeeeeee", out / "tasks" / "zeta__moved.eeeeeee")
    cat = Catalog.load(out)
    assert "zeta__eps.eeeeeee" not in cat and "is not the directory's name" in cat.errors[0].message


def test_a_mutation_score_that_is_no_number_is_named(out: Path) -> None:
    write_task(out / "tasks", "acme__bad.fffffff", extra={"stats": {"mutation_score": "high"}})
    cat = Catalog.load(out)
    assert len(cat) == 5 and cat.errors[0].path.endswith("acme__bad.fffffff/task.yaml")


def test_tasks_command_json_equals_the_api(out: Path) -> None:
    api = Catalog.load(out).filter(language="rust", difficulty="easy").as_json()
    result = CliRunner().invoke(
        main, ["tasks", str(out), "--language", "rust", "--difficulty", "easy", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == api and len(api) == 1
    lines = CliRunner().invoke(main, ["tasks", str(out), "--format", "jsonl", "--limit", "2"]).stdout
    assert [json.loads(line) for line in lines.splitlines()] == Catalog.load(out).limit(2).as_json()
    counts = CliRunner().invoke(main, ["tasks", str(out), "--breakdown", "kind", "--format", "json"])
    assert json.loads(counts.stdout) == Catalog.load(out).breakdown("kind")
    kinds = CliRunner().invoke(main, ["tasks", str(out), "--kind", "function", "--kind", "feature"])
    assert "acme__gamma.ccccccc" in kinds.stdout and "zeta__delta.ddddddd" in kinds.stdout
    assert "acme__alpha.aaaaaaa" not in kinds.stdout and "75.0%" in kinds.stdout


def test_evaluate_without_docker_says_docker_is_not_available(
    out: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/dead.sock")
    submission = tmp_path / "submission.tar.gz"
    submission.write_bytes(b"")
    cat = Catalog.load(out)
    with pytest.raises(DockerUnavailable, match=r"Docker is not available at unix://.*dead\.sock"):
        cat.evaluate("acme__alpha.aaaaaaa", submission)
    with pytest.raises(ConfigError, match="no submission tarball"):
        cat.evaluate("acme__alpha.aaaaaaa", tmp_path / "absent.tar.gz")


def test_a_release_without_images_is_checked_file_by_file(out: Path, tmp_path: Path) -> None:
    dest = tmp_path / "rel"
    info = make_release(out, dest, "v1", datetime(2025, 7, 1), images=False)
    assert info.tasks == [
        "acme__alpha.aaaaaaa",
        "acme__beta.bbbbbbb",
        "acme__gamma.ccccccc",
        "zeta__eps.eeeeeee",
    ]
    assert info.summary.by_kind == {"program": 3, "function": 1} and info.summary.mutation_score.tasks == 1
    card = (dest / "README.md").read_text()
    assert (
        "# v1" in card and "by kind: program: 3, function: 1" in card and "mutation score: mean 75.0%" in card
    )
    moved = shutil.move(dest, tmp_path / "elsewhere" / "v1")
    assert check_release(Path(moved)).name == "v1"
    assert Catalog.load(Path(moved) / "catalog.jsonl").tasks() == Catalog.load(moved).tasks()
    assert Catalog.load(moved).get("acme__gamma.ccccccc").task_dir == (
        Path(moved) / "tasks/acme__gamma.ccccccc"
    )
    with pytest.raises(ReleaseError, match="exists"):
        make_release(out, Path(moved), "v1", datetime(2025, 7, 1), images=False)
    with pytest.raises(ReleaseError, match="no task of .* was released before 2000-01-01"):
        make_release(out, tmp_path / "empty", "v0", datetime(2000, 1, 1), images=False)


def test_release_load_names_a_changed_an_added_and_a_missing_file(out: Path, tmp_path: Path) -> None:
    rel = tmp_path / "rel"
    result = CliRunner().invoke(
        main,
        ["release", str(out), "--as-of", "2026-01-01", "--name", "v2", "--dest", str(rel), "--no-images"],
    )
    assert result.exit_code == 0, result.output
    ok = CliRunner().invoke(main, ["release", "load", str(rel), "--no-images"])
    assert ok.exit_code == 0 and "every file matches" in ok.stdout
    changed = rel / "tasks" / "acme__beta.bbbbbbb" / "tests.json"
    changed.write_text(changed.read_text().replace("test_0", "test_9"))
    (rel / "tasks" / "acme__beta.bbbbbbb" / "extra.py").write_text("")
    (rel / "README.md").unlink()
    bad = CliRunner().invoke(main, ["release", "load", str(rel), "--no-images"])
    assert bad.exit_code == 1
    assert "tasks/acme__beta.bbbbbbb/tests.json: changed" in bad.stderr
    assert "tasks/acme__beta.bbbbbbb/extra.py: not in the manifest" in bad.stderr
    assert "README.md: missing" in bad.stderr and "3 file(s) differ" in bad.stderr
    assert (
        CliRunner().invoke(main, ["release", str(out), "--as-of", "2026-01-01", "--name", "a/b"]).exit_code
        == 1
    )
