"""The feature kind on examples/featlib, through the flow and `taskfoundry eval`'s dispatch by kind."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from taskfoundry.errors import FeatureError
from taskfoundry.evaluate.run import evaluate_run
from taskfoundry.harness.config import EvalConfig
from taskfoundry.kinds.feature.env import environment_stage
from taskfoundry.kinds.feature.grade import start_state_submission
from taskfoundry.kinds.feature.models import FeatureTaskYaml
from taskfoundry.kinds.feature.settings import FeatureSettings
from taskfoundry.models import TestsJson, load_json_model, load_yaml_model
from taskfoundry.pipeline.source import source_stage
from taskfoundry.sources import SourceConfig

from conftest import make_repo

pytestmark = pytest.mark.docker


def _task(path: Path) -> FeatureTaskYaml:
    return load_yaml_model(path / "task.yaml", FeatureTaskYaml)


def _members(tarball: Path | bytes) -> dict[str, bytes]:
    data = tarball.read_bytes() if isinstance(tarball, Path) else tarball
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_featlib_tasks_at_both_levels(featlib_tasks: list[Path]) -> None:
    assert [p.name.rsplit(".", 2)[1:] for p in featlib_tasks] == [["slug", "l1"], ["slug", "l2"]]
    one, two = (_task(p) for p in featlib_tasks)
    assert (one.kind, one.level, two.level) == ("feature", 1, 2)
    assert one.f2p == two.f2p and len(one.f2p) >= 3 and all(t.startswith("tests.test_slug.") for t in one.f2p)
    assert one.p2p and not set(one.p2p) & set(one.f2p)
    assert one.removed_lines > 3 and {i.name for i in one.interface} == {"slugify", "unique_slug"}
    assert "--timeout=60" in one.test_command and "tests/test_slug.py" in one.test_command
    tests = load_json_model(featlib_tasks[0] / "tests.json", TestsJson)
    assert list(tests.expected().values()) == [one.f2p + one.p2p]
    (suite,) = (featlib_tasks[0] / "tests").iterdir()
    hidden = _members(suite)
    assert "eval/restore/tests/test_slug.py" in hidden and "eval/restore/tests/conftest.py" in hidden
    assert "eval/base/featlib/slug.py" in _members(next((featlib_tasks[1] / "tests").iterdir()))
    prompt = (featlib_tasks[0] / "prompt.md").read_text()
    assert "def slugify(title: str" in prompt and "from featlib.slug import slugify, unique_slug" in prompt


def test_start_states_hold_no_removed_code(featlib_tasks: list[Path], docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    one = _members(start_state_submission(featlib_tasks[0], docker_client, tmp_path / "l1.tar.gz"))
    assert "tests/test_slug.py" not in one  # the hidden F2P file
    assert "tests/test_util.py" in one and "featlib/util.py" in one
    slug = one["featlib/slug.py"].decode()
    assert "NotImplementedError" in slug and 'out = f"{out}{separator}{part}"' not in slug
    assert _members(start_state_submission(featlib_tasks[1], docker_client, tmp_path / "l2.tar.gz")) == {}


def test_reports_name_the_dropped(featlib_tasks: list[Path]) -> None:
    report = json.loads((featlib_tasks[0] / "reports" / "feature.json").read_text())
    assert report["environment"]["failing_files"] == {"tests/test_broken.py": "1 of 2 tests fail"}
    # build_defaults runs when featlib is imported: stripping it breaks every P2P test
    assert report["validate_dropped"]["defaults"].startswith("strip_breaks_p2p")
    assert report["review_dropped"]["util"].startswith("nothing_removed")
    assert report["validate_dropped"]["table"].startswith("max_tasks")


def _run_dir(root: Path, name: str, submissions: dict[str, Path]) -> Path:
    run = root / name
    for task_id, path in submissions.items():
        (run / task_id).mkdir(parents=True)
        (run / task_id / "submission.tar.gz").write_bytes(path.read_bytes())
    return run


def _forged(start: Path, dest: Path) -> Path:
    """The start state with the tests made to pass: a conftest that skips, a P2P file rewritten."""
    files = _members(start) | {
        "tests/conftest.py": b"import pytest\n\n@pytest.fixture(autouse=True)\n"
        b"def _skip():\n    pytest.skip('x')\n",
        "tests/test_slug.py": b"def test_slugify():\n    assert True\n",
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    dest.write_bytes(buf.getvalue())
    return dest


def test_solution_resolves_start_state_does_not(
    featlib_tasks: list[Path], docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    tasks_dir = featlib_tasks[0].parent
    ids = [p.name for p in featlib_tasks]
    solved = evaluate_run(
        _run_dir(tmp_path, "gold", {i: tasks_dir / i / "solution.tar.gz" for i in ids}),
        tasks_dir,
        EvalConfig(),
        docker_client,
    )
    assert [(s.task_id, s.resolved, s.pass_rate) for s in solved.tasks] == [(i, True, 1.0) for i in ids]
    starts = {i: start_state_submission(tasks_dir / i, docker_client, tmp_path / f"{i}.tar.gz") for i in ids}
    starts[ids[0] + "-forged"] = _forged(starts[ids[0]], tmp_path / "forged.tar.gz")
    run = _run_dir(tmp_path, "start", {i: p for i, p in starts.items() if not i.endswith("-forged")})
    summary = evaluate_run(run, tasks_dir, EvalConfig(), docker_client)
    for score, task_id in zip(summary.tasks, ids, strict=True):
        task = _task(tasks_dir / task_id)
        result = json.loads((run / task_id / f"{task_id}.eval.json").read_text())
        status = {t["name"]: t["status"] for t in result["test_results"]}
        assert not score.resolved and score.passed == len(task.p2p)
        assert all(status[t] == "passed" for t in task.p2p)
        assert all(status[t] in ("failure", "error") for t in task.f2p)
    forged = _run_dir(tmp_path, "forged", {ids[0]: starts[ids[0] + "-forged"]})
    (score, *_) = evaluate_run(forged, tasks_dir, EvalConfig(), docker_client).tasks
    assert score.task_id == ids[0] and not score.resolved and score.passed == len(_task(featlib_tasks[0]).p2p)


PYPROJECT = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "{name}"\nversion = "0.1"\n\n[tool.setuptools]\npackages = ["{name}"]\n'
)


@pytest.mark.parametrize(
    ("tests", "reason"),
    [
        ({"tests/test_a.py": "def test_a():\n    assert 1 == 2\n"}, "no test file passes completely"),
        ({"tests/helpers.py": "X = 1\n"}, "tests do not run"),
    ],
)
def test_bad_repositories_end_with_a_reason(
    tests: dict[str, str], reason: str, base_image, docker_client, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(
        tmp_path / "badlib",
        {"pyproject.toml": PYPROJECT.format(name="badlib"), "badlib/__init__.py": "", **tests},
    )
    src = source_stage(str(repo), SourceConfig(), tmp_path / "work")
    with pytest.raises(FeatureError, match=reason):
        environment_stage(src, None, FeatureSettings(out=tmp_path, namespace="taskfoundry"), docker_client)
