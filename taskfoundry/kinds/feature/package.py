"""The package part: for each validated feature and level, a task directory and its images.

Images (content-addressed, then tagged with the task's names): the reference environment
(`:task`: the environment image with the whole repository installed at /workspace), and
the start state (`:task_cleanroom`): level 1, the stripped repository without the F2P test
file, as a fresh git repository with one anonymous commit; level 2, an empty workspace,
the project's editable install kept from a build stage that had the stripped tree (so the
grader's composed workspace imports the same way). Neither holds the removed code.
"""

from __future__ import annotations

import ast
import io
import logging
import shlex
import tarfile
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

import docker
import jinja2

from taskfoundry import atomic
from taskfoundry.assets import asset
from taskfoundry.images.build import tag_alias
from taskfoundry.kinds.feature.images import commit_image, outside_workspace_removed
from taskfoundry.kinds.feature.objects import TEST_DIRS
from taskfoundry.kinds.feature.results import (
    CandidatesStage,
    EnvStage,
    ReviewStage,
    ValidatedTask,
    VerdictStage,
)
from taskfoundry.kinds.feature.runner import INSTALL, MTIME, RESULTS, pytest_command, repo_files
from taskfoundry.kinds.feature.scan import STEERING
from taskfoundry.kinds.feature.selfcheck import keep_checked, leak_lines
from taskfoundry.kinds.feature.settings import FeatureSettings
from taskfoundry.kinds.feature.taskfile import FeatureTaskYaml
from taskfoundry.layout import WORKSPACE
from taskfoundry.models import (
    Branch,
    TaskStats,
    TestsJson,
    branch_key,
    save_json,
    save_yaml,
)
from taskfoundry.naming import TaskNames, feature_task_id, tasks_dir
from taskfoundry.pipeline.difficulty import difficulty
from taskfoundry.pipeline.provenance import StageTimes, provenance
from taskfoundry.pipeline.results import BuildStage, SourceResult

# a fresh repository with one anonymous commit (root builds it; the tree belongs to the worker)
_GIT = (
    "git init -q && git -c safe.directory='*' add -A && git -c safe.directory='*' -c user.name=worker "
    "-c user.email=worker@localhost commit -qm 'start' --allow-empty"
)

BRANCH = "feature"  # the one branch of the hidden suite (its key names the tarball)


log = logging.getLogger(__name__)


def is_test_path(rel: str) -> bool:
    """Files the grader restores from the reference: tests, conftests, pytest configuration."""
    parts = rel.split("/")
    name = parts[-1]
    if len(parts) == 1 and name in STEERING:
        return True
    return (
        name == "conftest.py"
        or (len(parts) > 1 and parts[0] in TEST_DIRS)
        or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))
    )


def start_files(original: Mapping[str, bytes], task: ValidatedTask) -> dict[str, bytes]:
    """The level-1 workspace: the stripped repository without the hidden F2P test file."""
    files = {**original, **{rel: text.encode() for rel, text in task.candidate.stripped.items()}}
    files.pop(task.candidate.f2p_file, None)
    return files


def _tar_gz(files: Mapping[str, bytes], prefix: str = "") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for rel, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{prefix}{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, MTIME
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def suite_tarball(original: Mapping[str, bytes], task: ValidatedTask, level: int, command: str) -> bytes:
    """tests/<branch>.tar.gz: eval/restore (every test file and pytest setting of the reference,
    the hidden F2P file among them), eval/base (level 2: the stripped repository), eval/run.sh."""
    restore = {rel: data for rel, data in original.items() if is_test_path(rel)}
    files = {f"eval/restore/{rel}": data for rel, data in restore.items()}
    if level == 2:
        base = start_files(original, task)
        files |= {f"eval/base/{rel}": data for rel, data in base.items() if not is_test_path(rel)}
    compose = asset("feature/feature_compose.py")
    files["eval/compose.py"] = compose
    files["eval/run.sh"] = f'#!/bin/sh\ncd {WORKSPACE} && exec {command} "$@"\n'.encode()
    return _tar_gz(files)


def solution_tarball(original: Mapping[str, bytes], task: ValidatedTask, level: int) -> bytes:
    """A submission that resolves the task: the reference repository (level 1), or the
    reference's versions of the stripped modules (level 2)."""
    if level == 1:
        return _tar_gz({rel: d for rel, d in original.items() if rel != task.candidate.f2p_file})
    return _tar_gz({rel: original[rel] for rel in task.candidate.stripped})


def reference_image(env: EnvStage, names: TaskNames, client: docker.DockerClient) -> str:
    commands = [INSTALL, f"chown -R 1000:1000 {WORKSPACE}"]
    log = names.kind_dir("feature", "reference.log")
    return commit_image(
        client, env.image, repo_files(env.repo), commands, f"{names.namespace}/feature-reference", log
    )[0]


def start_image(
    env: EnvStage, names: TaskNames, task: ValidatedTask, level: int, client: docker.DockerClient
) -> str:
    files = start_files(repo_files(env.repo), task)
    tops = sorted({i.module.split(".")[0] for i in task.candidate.interface})
    commands = [INSTALL, "rm -rf *.egg-info", outside_workspace_removed(tops)]
    if level == 2:  # the install made with the stripped tree, the tree itself left behind
        commands.append(f"find {WORKSPACE} -mindepth 1 -delete")
    commands += [_GIT, f"chown -R 1000:1000 {WORKSPACE}"]
    log = names.kind_dir("feature", f"start-{task.candidate.name}-l{level}.log")
    return commit_image(client, env.image, files, commands, f"{names.namespace}/feature-start", log)[0]


def test_imports(original: Mapping[str, bytes], task: ValidatedTask, project_tops: set[str]) -> list[str]:
    """The F2P file's import lines that import the project."""
    try:
        tree = ast.parse(original[task.candidate.f2p_file].decode(errors="replace"))
    except SyntaxError:
        return []
    lines = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in project_tops:
            lines.append(ast.unparse(node))
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] in project_tops for a in node.names):
            lines.append(ast.unparse(node))
    return lines


def render_prompt(**values: object) -> str:
    source = resources.files("taskfoundry.kinds.feature").joinpath("templates/prompt.md.j2").read_text()
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    return env.from_string(source).render(**values)


def package_stage(
    src: SourceResult,
    build: BuildStage | None,
    env: EnvStage,
    gen: CandidatesStage,
    review: ReviewStage,
    verdict: VerdictStage,
    settings: FeatureSettings,
    client: docker.DockerClient,
    times: StageTimes,
) -> list[Path]:
    """Every task directory of this source, each written in one rename."""
    names = settings.names(src)
    original = repo_files(env.repo)
    reference = reference_image(env, names, client) if verdict.tasks else ""
    tops = {i.module.split(".")[0] for t in verdict.tasks for i in t.candidate.interface}
    written: dict[Path, list[str]] = {}  # task directory -> lines of its removed code
    for task in verdict.tasks:
        lines = leak_lines(original, task.candidate.stripped)
        for level in settings.feature.levels:
            args = (src, env, gen, review, verdict, task, level, original, tops, reference)
            written[_write_task(*args, settings.feature.test_timeout, names, client, times)] = lines
    return keep_checked(written, settings.harness, client, names.kind_dir("feature", "selfcheck"))


def _write_task(
    src: SourceResult,
    env: EnvStage,
    gen: CandidatesStage,
    review: ReviewStage,
    verdict: VerdictStage,
    task: ValidatedTask,
    level: int,
    original: Mapping[str, bytes],
    tops: set[str],
    reference: str,
    test_timeout: float,
    names: TaskNames,
    client: docker.DockerClient,
    times: StageTimes,
) -> Path:
    cand = task.candidate
    final = tasks_dir(names.out) / feature_task_id(names.task_id, cand.name, level)
    made = provenance(final, src.commit, times)
    images = names.images_of(f".{cand.name}.l{level}")
    tag_alias(client, reference, images.task)
    tag_alias(client, start_image(env, names, task, level, client), images.task_cleanroom)
    files = [cand.f2p_file, *cand.p2p_files]
    command = pytest_command(files, test_timeout, RESULTS, task.deselected)
    score, rank = difficulty(cand.removed_lines, len(env.requirements))
    yaml_model = FeatureTaskYaml(
        repository=f"{src.owner}/{src.repo}",
        commit=src.commit,
        language="python",
        difficulty=rank,
        eval_clean_hashes=[],
        task_id=feature_task_id(names.task_id, cand.name, level),
        difficulty_score=score,
        source=src.source,
        created_at=made.created_at,
        executable="",
        images=images,
        upstream=src.upstream,
        source_visible=True,
        stats=TaskStats(
            tests_generated=len(task.f2p) + len(task.p2p),
            tests_kept=len(task.f2p) + len(task.p2p),
            stage_seconds=made.stage_seconds,
            reused_stages=made.reused_stages,
        ),
        level=level,
        feature=cand.name,
        f2p=task.f2p,
        p2p=task.p2p,
        f2p_files=[cand.f2p_file],
        p2p_files=cand.p2p_files,
        removed_lines=cand.removed_lines,
        interface=cand.interface,
        test_command=command,
        test_timeout=test_timeout,
        return_types=task.return_types,
        return_values=task.return_values,
        values_direct=task.values_direct,
    )
    key = branch_key(BRANCH)
    tests = TestsJson(branches={key: Branch(tests=[*task.f2p, *task.p2p])})
    prompt = render_prompt(
        project=env.project,
        repository=f"{src.owner}/{src.repo}",
        level=level,
        interface=[i for i in cand.interface],
        imports=test_imports(original, task, tops) or [f"import {env.project}"],
        test_command=shlex.join(["python", "-m", "pytest", *files]),
        test_timeout=test_timeout,
        return_types=task.return_types,
    )
    with atomic.staged_dir(final) as tmp:
        save_yaml(tmp / "task.yaml", yaml_model)
        save_json(tmp / "tests.json", tests)
        atomic.write_text(tmp / "prompt.md", prompt)
        atomic.write_bytes(tmp / "tests" / f"{key}.tar.gz", suite_tarball(original, task, level, command))
        atomic.write_bytes(tmp / "solution.tar.gz", solution_tarball(original, task, level))
        atomic.write_json(
            tmp / "reports" / "feature.json",
            {
                "environment": {
                    "image": env.image,
                    "requirements": env.requirements,
                    "passing_files": env.passing_files,
                    "failing_files": env.failing_files,
                    "notes": env.notes,
                },
                "candidates": [
                    {
                        "name": c.name,
                        "f2p_file": c.f2p_file,
                        "objects": c.objects,
                        "removed_lines": c.removed_lines,
                        "capped": c.capped,
                        "dropped": c.dropped,
                        "detail": c.detail,
                    }
                    for c in gen.candidates
                ],
                "review_dropped": review.dropped,
                "validate_dropped": verdict.dropped,
                "stripped_files": sorted(cand.stripped),
            },
        )
    return final
