"""The generate part: F2P candidates, the trace, and extraction (one candidate per test file).

One traced run of every passing test file (assets/feature_trace.py, `sys.setprofile`)
gives, per file, the project functions its tests call and the call graph's edges. Each
passing file is then a candidate: its tested objects by rules (`objects`), its P2P files
(other passing files that reach none of its tested objects: `choose_p2p`), and the extraction
(`extract`). A candidate that cannot go on is kept with its reason, and the others go on.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path

import docker

from taskfoundry.assets import asset
from taskfoundry.errors import FeatureError
from taskfoundry.kinds.feature.extract import FileTrace, extract
from taskfoundry.kinds.feature.objects import ObjectRef, Project, tested_objects
from taskfoundry.kinds.feature.results import Candidate, CandidatesStage, EnvStage
from taskfoundry.kinds.feature.runner import CHECK_LIMITS, RepoBox, repo_files
from taskfoundry.kinds.feature.settings import FeatureSettings
from taskfoundry.pipeline.results import BuildStage, SourceResult
from taskfoundry.sandbox.docker import DockerSandbox

log = logging.getLogger(__name__)
PLUGIN_DIR = "/tmp"
TRACE_OUT = "/tmp/tf-trace.json"  # the plugin sits beside it in /tmp
# the trace's record of calls made before the first test (module-level code run at import):
# what every test file needs, so it stays as what a P2P test reaches does
COLLECTION = "<collection>"


def trace_files(
    env: EnvStage, settings: FeatureSettings, client: docker.DockerClient
) -> dict[str, FileTrace]:
    """Run the passing test files once with the tracer: test file -> what its tests called."""
    plugin = asset("feature/feature_trace.py")
    with DockerSandbox(env.image, CHECK_LIMITS, client=client) as box:
        runner = RepoBox(box)
        runner.load(repo_files(env.repo))
        box.put_file(plugin, f"{PLUGIN_DIR}/feature_trace.py")
        environ = {
            "PYTHONPATH": PLUGIN_DIR,
            "TF_TRACE_ROOT": "/workspace",
            "TF_TRACE_OUT": TRACE_OUT,
            "TF_TRACE_COLLECTION": COLLECTION,
        }
        cfg = settings.feature
        # -p before the files: the plugin is loaded for this run only
        _, tail = runner.pytest(
            ["-p", "feature_trace", *env.passing_files], cfg.test_timeout, cfg.suite_timeout * 2, environ
        )
        try:
            data = json.loads(box.get_file(TRACE_OUT))
        except (FileNotFoundError, json.JSONDecodeError) as exc:
            raise FeatureError(f"the traced run wrote no trace: {tail[-1500:]}") from exc
    return {
        file: FileTrace(frozenset(rec["calls"]), frozenset((a, b) for a, b in rec["edges"]))
        for file, rec in data["files"].items()
    }


def generate_stage(
    src: SourceResult,
    build: BuildStage | None,
    env: EnvStage,
    settings: FeatureSettings,
    client: docker.DockerClient,
) -> CandidatesStage:
    traces = trace_files(env, settings, client)
    project = Project(env.repo)
    names: set[str] = set()
    candidates = []
    pool = [f for f in env.passing_files if not starts_processes(env.repo / f)]
    for f2p in env.passing_files:
        cand = candidate(project, f2p, pool, traces, settings, _unique(f2p, names))
        log.info("%s: candidate %s: %s", src.task_id, f2p, cand.dropped or f"{cand.removed_lines} lines")
        candidates.append(cand)
    return CandidatesStage(
        env=env, traced_tests=len(env.tests), candidates=candidates, config=settings.feature
    )


_SPAWNS = re.compile(r"\bsubprocess\b|\bsys\.executable\b|\bos\.system\b|\bmultiprocessing\b")


def starts_processes(path: Path) -> bool:
    """Whether a test file may run the project in a child process, where the trace does not
    follow (tabulate's CLI tests): it may reach any code, so it is no P2P file."""
    try:
        return bool(_SPAWNS.search(path.read_text(errors="replace")))
    except OSError:
        return True


def _unique(f2p: str, taken: set[str]) -> str:
    stem = re.sub(
        r"[^a-z0-9]+", "-", Path(f2p).stem.removeprefix("test_").removesuffix("_test").lower()
    ).strip("-")
    name, n = stem or "feature", 2
    while name in taken:
        name, n = f"{stem}-{n}", n + 1
    taken.add(name)
    return name


def object_keys(tops: Sequence[ObjectRef], calls: frozenset[str]) -> frozenset[str]:
    """The traced `path::qualname` keys of the tested objects: a function, or a class's methods."""
    return frozenset(
        key
        for ref in tops
        for key in calls
        if key == f"{ref.file}::{ref.name}" or key.startswith(f"{ref.file}::{ref.name}.")
    )


def choose_p2p(
    f2p: str, passing: list[str], traces: dict[str, FileTrace], count: int, tested: frozenset[str]
) -> list[str]:
    """Other passing files that reach none of the tested objects, those calling into the same
    source files as `f2p` first. Code a P2P test reaches stays in the stripped repository: a
    P2P file that calls a tested object keeps it, and the candidate removed nothing."""
    empty = FileTrace(frozenset(), frozenset())
    mine = {key.split("::")[0] for key in traces.get(f2p, empty).calls}

    def overlap(file: str) -> int:
        return len({k.split("::")[0] for k in traces.get(file, empty).calls} & mine)

    others = [f for f in passing if f != f2p and not traces.get(f, empty).calls & tested]
    return sorted(others, key=lambda f: (-overlap(f), f))[:count]


def candidate(
    project: Project,
    f2p: str,
    passing: list[str],
    traces: dict[str, FileTrace],
    settings: FeatureSettings,
    name: str,
) -> Candidate:
    tops = tested_objects(project, f2p)
    trace = traces.get(f2p)
    calls = trace.calls if trace is not None else frozenset()
    p2p = choose_p2p(f2p, passing, traces, settings.feature.p2p_files, object_keys(tops, calls))
    cand = Candidate(name=name, f2p_file=f2p, p2p_files=p2p)
    cand.objects = [t.key for t in tops]
    if not tops:
        return _drop(cand, "no_tested_objects", "the file uses no top-level object of the project")
    if trace is None or not trace.calls:
        return _drop(cand, "not_traced", "its tests called no project function")
    at_import = traces.get(COLLECTION, FileTrace(frozenset(), frozenset())).calls
    p2p_calls = set(at_import).union(*(traces[f].calls for f in p2p if f in traces))
    ex = extract(project.repo, tops, trace, p2p_calls, settings.feature.max_removed_lines)
    cand.stripped, cand.interface = ex.stripped, ex.interface
    cand.removed_lines, cand.capped = ex.removed_lines, ex.capped
    if not ex.stripped:
        why = (
            f"P2P tests or imports reach every tested object ({', '.join(ex.skipped)})"
            if ex.skipped
            else "nothing to remove"
        )
        return _drop(cand, "nothing_removed", why)
    return cand


def _drop(cand: Candidate, reason: str, detail: str) -> Candidate:
    cand.dropped, cand.detail = reason, detail
    return cand
