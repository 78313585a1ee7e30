"""The validate part: each candidate run on the stripped repository and with the reference
restored, in a container of the environment image.

Stripped: every P2P test passes (else the stripping broke code the rest of the repository
needs: dropped with the failing tests named), and F2P tests fail. Restored: every test of
the F2P and P2P files passes. F2P = the F2P file's tests that fail stripped and pass
restored; its other tests join P2P. Then the gates: more than `min_removed_lines` removed,
at least `min_f2p` F2P tests.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import docker

from taskfoundry.assets import asset
from taskfoundry.errors import SandboxError
from taskfoundry.kinds.feature.evidence import settle
from taskfoundry.kinds.feature.grade import typed_interface
from taskfoundry.kinds.feature.results import (
    Candidate,
    CandidatesStage,
    EnvStage,
    ReviewStage,
    TestCase,
    ValidatedTask,
    VerdictStage,
)
from taskfoundry.kinds.feature.runner import CHECK_LIMITS, RepoBox, repo_files
from taskfoundry.kinds.feature.settings import FeatureSettings
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)
TYPES_DIR = "/tmp/tf-types"


def validate_stage(
    gen: CandidatesStage,
    review: ReviewStage,
    env: EnvStage,
    settings: FeatureSettings,
    client: docker.DockerClient,
) -> VerdictStage:
    dropped = dict(review.dropped)
    tasks: list[ValidatedTask] = []
    original = repo_files(env.repo)
    for cand in gen.candidates:
        if cand.name not in review.kept:
            continue
        if settings.feature.max_tasks is not None and len(tasks) >= settings.feature.max_tasks:
            dropped[cand.name] = f"max_tasks: {settings.feature.max_tasks} tasks kept already"
            continue
        try:
            task, why = validate_one(cand, original, env, settings, client)
        except SandboxError as exc:  # one candidate's infrastructure failure is its own
            task, why = None, f"sandbox_error: {exc}"
        if task is None:
            dropped[cand.name] = why
            log.info("feature %s dropped: %s", cand.name, why)
        else:
            tasks.append(task)
    return VerdictStage(tasks=tasks, dropped=dropped)


def validate_one(
    cand: Candidate,
    original: dict[str, bytes],
    env: EnvStage,
    settings: FeatureSettings,
    client: docker.DockerClient,
) -> tuple[ValidatedTask | None, str]:
    cfg = settings.feature
    files = [cand.f2p_file, *cand.p2p_files]
    stripped = {rel: text.encode() for rel, text in cand.stripped.items()}
    with DockerSandbox(env.image, CHECK_LIMITS, client=client) as box:
        runner = RepoBox(box)
        runner.load({**original, **stripped})
        on_stripped, tail = runner.pytest(files, cfg.test_timeout, cfg.suite_timeout)
        if not on_stripped:
            return None, f"stripped_run_failed: {tail[-800:]}"
        runner.put({rel: original[rel] for rel in stripped})
        recording = types_recorder(box, cand)
        on_reference, tail = runner.pytest(files, cfg.test_timeout, cfg.suite_timeout, env=recording)
        types = recorded_types(box)
        runs = [recorded_values(box)]
        refused = _recorded(box, "refused.json")
        for seed in range(1, cfg.value_runs if on_reference else 0):
            # again, another hash seed: what differs between runs is required by its type only
            again, tail = runner.pytest(
                files, cfg.test_timeout, cfg.suite_timeout, env={**recording, "PYTHONHASHSEED": str(seed)}
            )
            on_reference = _worst(on_reference, again)
            runs.append(recorded_values(box))
    if not on_reference:
        return None, f"reference_run_failed: {tail[-800:]}"
    values = settle(runs)
    ref = {c.junit: c.status for c in on_reference}
    broken = sorted(j for j, s in ref.items() if s in ("failure", "error"))
    if broken:
        return None, f"reference_fails: {len(broken)} tests, e.g. {broken[:3]}"
    if "" in refused:  # outside any test: the grader would refuse the reference's whole run
        return None, f"grader_refuses_reference: {refused['']['why'][:300]}"
    # tests the grader would refuse with the reference as the submission (frames read while a
    # module it changes is on the stack, a test reading its own hidden file): left out of the
    # task and deselected from its command, the grader's rules unchanged
    left_out = {t: r["junit"] for t, r in refused.items() if isinstance(r, dict) and r.get("junit")}
    if left_out:
        log.info("feature %s: %d tests the grader would refuse left out", cand.name, len(left_out))
    ref = {j: s for j, s in ref.items() if j not in set(left_out.values())}
    passed_ref = {j for j, s in ref.items() if s == "passed"}
    stripped_status = {c.junit: c.status for c in on_stripped}
    in_f2p_file = {c.junit for c in on_reference if c.file == cand.f2p_file}
    p2p_broken = sorted(j for j in passed_ref - in_f2p_file if stripped_status.get(j) != "passed")
    if p2p_broken:
        return None, f"strip_breaks_p2p: {len(p2p_broken)} P2P tests fail stripped, e.g. {p2p_broken[:3]}"
    f2p = sorted(j for j in passed_ref & in_f2p_file if stripped_status.get(j) != "passed")
    p2p = sorted(j for j in passed_ref if j not in f2p)
    if not f2p:
        return None, "no_f2p: every test of the F2P file passes on the stripped repository"
    if len(f2p) < cfg.min_f2p:
        return None, f"too_few_f2p: {len(f2p)} (needs >= {cfg.min_f2p})"
    if cand.removed_lines <= cfg.min_removed_lines:
        return None, f"too_few_removed_lines: {cand.removed_lines} (needs > {cfg.min_removed_lines})"
    kept = {test: types[test] for test in f2p if test in types}
    evidence = {test: values[test]["values"] for test in f2p if values.get(test)}
    direct = sorted(test for test in evidence if values[test]["direct"])
    if not evidence:
        # grading decides an F2P test's pass on the host from these: a task none of whose F2P
        # tests left any would be decided by the run alone, which the submission can forge
        return None, "unverifiable: no F2P test saw the interface return a value"
    return (
        ValidatedTask(
            candidate=cand,
            f2p=f2p,
            p2p=p2p,
            return_types=kept,
            return_values=evidence,
            values_direct=direct,
            deselected=sorted(left_out),
        ),
        "",
    )


def _worst(first: list[TestCase], again: list[TestCase]) -> list[TestCase]:
    """The first run's cases, each failed if it did not pass again (a reference that passes a
    test only sometimes fails it); none when the second run gave no report."""
    if not again:
        return []
    passed = {c.junit for c in again if c.status == "passed"}
    return [
        c if c.status != "passed" or c.junit in passed else c.model_copy(update={"status": "failure"})
        for c in first
    ]


def types_recorder(box: DockerSandbox, cand: Candidate) -> dict[str, str]:
    """The environment of a run that records what the tested functions return, per test
    (assets/feature_types.py as a pytest plugin): the grader checks the same types."""
    box.exec(f"mkdir -p {TYPES_DIR} && chmod 0777 {TYPES_DIR}", timeout=60, user="0:0")
    plugin = asset("feature/feature_types.py")
    box.put_file(plugin, f"{TYPES_DIR}/tf_feature_types.py")
    box.put_file(asset("feature/feature_guard.py"), f"{TYPES_DIR}/tf_feature_guard.py")
    return {
        "PYTHONPATH": TYPES_DIR,
        "PYTEST_PLUGINS": "tf_feature_types",
        "TF_TYPES_RECORD": f"{TYPES_DIR}/types.json",
        "TF_TYPES_TARGETS": json.dumps(typed_interface(cand.interface)),
        "TF_VALUES_RECORD": f"{TYPES_DIR}/values.json",
        "TF_VALUES_TESTS": json.dumps([cand.f2p_file]),
        "TF_REFUSED_RECORD": f"{TYPES_DIR}/refused.json",
        "TF_SUBMITTED_FILES": json.dumps(sorted(cand.stripped)),
    }


def recorded_types(box: DockerSandbox) -> dict[str, dict[str, list[str]]]:
    return _recorded(box, "types.json")


def recorded_values(box: DockerSandbox) -> dict[str, dict[str, Any]]:
    """Test -> {"all": every observation in it, "direct": those that reached the test's own
    code} (assets/feature_types.py: `evidence`, `typed_evidence`), of one run."""
    return _recorded(box, "values.json")


def _recorded(box: DockerSandbox, name: str) -> Any:
    try:
        data = json.loads(box.get_file(f"{TYPES_DIR}/{name}"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
