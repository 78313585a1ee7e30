"""The agent generator on a LocalSandbox: a real gcov-instrumented C program, a scripted model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskfoundry import sections
from taskfoundry.agent import ScriptedModel, Turn, read_trajectory
from taskfoundry.agent.scripted import bash, call, fail, submit
from taskfoundry.builders.recipe import Recipe
from taskfoundry.config import Config
from taskfoundry.errors import GenerationError
from taskfoundry.kinds.program.settings import AgentGenConfig
from taskfoundry.kinds.program.testgen.agent_gen import AgentGenerator
from taskfoundry.kinds.program.testgen.agent_support import Layout
from taskfoundry.kinds.program.testgen.base import GenerationContext
from taskfoundry.sandbox.local import LocalSandbox

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("gcov") is None, reason="needs a C compiler and gcov"
)

GREET_C = r"""#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        printf("Usage: greet [--shout] NAME\n");
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "--shout") == 0) {
        printf("HELLO, %s!\n", argv[2]);
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "greet: missing name\n");
        return 2;
    }
    printf("hello, %s\n", argv[1]);
    return 0;
}
"""
HEAD = "from tfrun import run\n"
HELLO = '''

def test_hello(tmp_path):
    """CATCHES: a greeting with the wrong wording."""
    result = run(["ann"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "hello, ann\\n"
    assert result.stderr == ""
'''
SHOUT = '''

def test_shout(tmp_path):
    """CATCHES: a --shout that does not upper-case the greeting."""
    result = run(["--shout", "bob"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "HELLO, bob!\\n"
    assert result.stderr == ""
'''
WEAK = '''

def test_weak(tmp_path):
    """CATCHES: nothing much, it only checks the exit status."""
    result = run(["--help"], cwd=tmp_path)
    assert result.returncode == 0
'''
WRONG = '''

def test_wrong(tmp_path):
    """CATCHES: a greeting with the wrong wording, but expects the wrong text."""
    result = run(["ann"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "hi, ann\\n"
'''


def write(name: str, *bodies: str) -> Turn:
    return bash(f"mkdir -p eval/tests && cat > eval/tests/{name} <<'EOF'\n{HEAD}{''.join(bodies)}EOF")


@pytest.fixture
def box(tmp_path: Path) -> Iterator[LocalSandbox]:
    """/cov holds greet.c built with --coverage; /task/{gold,cov}/executable."""
    with LocalSandbox(tmp_path / "root") as sandbox:
        cov = sandbox.host_path("/cov")
        cov.mkdir(parents=True)
        (cov / "greet.c").write_text(GREET_C)
        subprocess.run(
            "cc --coverage -O0 -c greet.c -o greet.o && cc --coverage -o greet greet.o",
            shell=True,
            cwd=cov,
            check=True,
        )
        for kind, source in (("gold", None), ("cov", cov / "greet")):
            target = sandbox.host_path(f"/task/{kind}/executable")
            target.parent.mkdir(parents=True)
            if source is None:
                subprocess.run(["cc", "-O0", "-o", str(target), str(cov / "greet.c")], check=True)
            else:
                shutil.copy(source, target)
        yield sandbox


def context(box: LocalSandbox, tmp_path: Path, **agent: object) -> GenerationContext:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True, exist_ok=True)
    (repo / "tests" / "run.sh").write_text("#!/bin/sh\n./greet ann\n")
    settings = {"strategy": "monolithic", "harvest": False, "review": False, **agent}
    config = Config.model_validate(
        {"generator": "agent", "agent": settings, "filter": {"dummies": ["silent", "echo"]}}
    )
    recipe = Recipe(
        kind="make",
        language="c",
        build=["true"],
        coverage_build=["true"],
        executable="greet",
        coverage_executable="greet",
        coverage="gcov",
    )
    return GenerationContext(
        sandbox=box,
        repo=repo,
        program="greet",
        recipe=recipe,
        go_module="",
        log_dir=tmp_path / "logs",
        config=sections.for_generate(config).generator,
    )


def generate(box: LocalSandbox, tmp_path: Path, model: ScriptedModel, **agent: object):  # type: ignore[no-untyped-def]
    layout = Layout(prefix=str(box.root), python=sys.executable)
    return AgentGenerator(model=model, layout=layout).generate(context(box, tmp_path, **agent))


def last_user_texts(model: ScriptedModel) -> list[str]:
    return [m.content for m in model.seen[-1] if m.role == "user"]


def test_agentgen_monolithic_writes_a_covered_branch(box: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([write("test_greet.py", HELLO, SHOUT), submit()])
    branch = generate(box, tmp_path, model, review=True)
    assert branch.name == "agent-monolithic-scripted"
    assert sorted(branch.files) == ["test_greet.py"] and "tfrun" not in "".join(branch.files)
    assert branch.tests == ["eval.tests.test_greet.test_hello", "eval.tests.test_greet.test_shout"]
    assert branch.exhausted is None
    assert branch.total["greet.c"] and branch.covered["greet.c"] < branch.total["greet.c"]
    shout = set(branch.per_test_lines["eval.tests.test_greet.test_shout"]["greet.c"])
    hello = set(branch.per_test_lines["eval.tests.test_greet.test_hello"]["greet.c"])
    assert shout - hello and hello - shout
    traj = read_trajectory(tmp_path / "logs" / "trajectories" / branch.name / "monolithic.json")
    assert traj.result is not None and traj.result.status == "submitted"
    assert "from tfrun import run" in traj.messages[1].content
    report = json.loads((tmp_path / "logs" / f"{branch.name}.json").read_text())
    assert [r["label"] for r in report["runs"]] == ["monolithic"] and report["tests"] == 2


def test_agentgen_review_sends_lint_gold_and_dummy_findings(box: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            write("test_greet.py", HELLO, WEAK, WRONG),
            bash("echo x > eval/tests/data.txt"),
            submit(),
            write("test_greet.py", HELLO),
            bash("rm eval/tests/data.txt"),
            submit(),
        ]
    )
    branch = generate(box, tmp_path, model, review=True)
    (review,) = [t for t in last_user_texts(model) if t.startswith("Review of your tests")]
    assert "eval.tests.test_greet.test_weak (line" in review and "sole_returncode" in review
    assert "eval.tests.test_greet.test_wrong fails on the reference program" in review
    assert "eval.tests.test_greet.test_weak passes on decoy programs (`silent`" in review
    assert "eval/tests/data.txt is not shipped" in review
    assert "test_hello" not in review
    assert branch.tests == ["eval.tests.test_greet.test_hello"]


def test_agentgen_coverage_tool_reports_uncovered_lines(box: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([write("test_greet.py", HELLO), call("coverage"), submit()])
    generate(box, tmp_path, model)
    (tool_out,) = [m.content for m in model.seen[-1] if m.role == "tool" and "line coverage" in m.content]
    assert "uncovered lines:" in tool_out and "greet.c:" in tool_out
    assert "1 of 1 tests passed on the coverage build" in tool_out


def test_agentgen_iterative_rounds_follow_uncovered_lines(box: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel(
        [write("test_greet.py", HELLO), submit(), write("test_r2_shout.py", SHOUT), submit()]
    )
    branch = generate(box, tmp_path, model, strategy="iterative", max_rounds=2)
    round2 = model.seen[2][1].content
    assert "Round 2. The tests directory already holds test_greet.py" in round2
    assert "greet.c:" in round2
    assert branch.name == "agent-iterative-scripted"
    assert branch.tests == ["eval.tests.test_greet.test_hello", "eval.tests.test_r2_shout.test_shout"]
    report = json.loads((tmp_path / "logs" / f"{branch.name}.json").read_text())
    first, second = report["runs"]
    assert (first["label"], second["label"]) == ("round-1", "round-2")
    assert 0 < first["coverage_percent"] < second["coverage_percent"]


def test_agentgen_iterative_stops_at_the_coverage_target(box: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([write("test_greet.py", HELLO), submit()])
    branch = generate(box, tmp_path, model, strategy="iterative", coverage_target=0.1)
    assert model.remaining == 0 and branch.tests == ["eval.tests.test_greet.test_hello"]


def test_agentgen_decomposed_one_run_per_area_with_harvest(box: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel(
        [write("test_harvested.py", HELLO), submit(), write("test_args_shout.py", SHOUT), submit(), submit()]
    )
    branch = generate(
        box,
        tmp_path,
        model,
        strategy="decomposed",
        harvest=True,
        areas=["args", "tui"],
        budget={"step_limit": 9},
    )
    prompts = [seen[1].content for seen in model.seen if len(seen) == 2]
    assert "/src/tests/run.sh" in prompts[0] and "test_harvested" in prompts[0]
    assert "Name the files test_args_*.py" in prompts[1] and "test_tui_" in prompts[2]
    labels = [r["label"] for r in json.loads((tmp_path / "logs" / f"{branch.name}.json").read_text())["runs"]]
    assert labels == ["area-harvested", "area-args", "area-tui"]
    assert len(branch.tests) == 2 and branch.exhausted is None


def test_agentgen_budget_exhaustion_keeps_a_marked_partial_branch(box: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([write("test_greet.py", HELLO), bash("ls eval/tests"), submit()])
    branch = generate(box, tmp_path, model, budget={"step_limit": 2})
    assert branch.exhausted == "steps" and branch.tests == ["eval.tests.test_greet.test_hello"]


def test_agentgen_model_error_keeps_the_tests_written(box: LocalSandbox, tmp_path: Path) -> None:
    model = ScriptedModel([write("test_greet.py", HELLO), fail("api down")])
    branch = generate(box, tmp_path, model, strategy="decomposed", areas=["args", "io"])
    assert branch.exhausted == "error" and len(branch.tests) == 1
    assert len(model.seen) == 2  # the second area never started


def test_agentgen_no_tests_is_a_stage_error_naming_the_report(box: LocalSandbox, tmp_path: Path) -> None:
    with pytest.raises(GenerationError, match="no usable tests.*monolithic: submitted") as info:
        generate(box, tmp_path, ScriptedModel([submit()]))
    assert info.value.log is not None and info.value.log.exists()


def test_agentgen_broken_test_file_is_left_out(box: LocalSandbox, tmp_path: Path) -> None:
    broken = bash("echo 'def test_x(:' > eval/tests/test_bad.py")
    model = ScriptedModel([write("test_greet.py", HELLO), broken, submit(), submit()])
    branch = generate(box, tmp_path, model, review=True, budget={"max_revisions": 1})
    assert "eval.tests.test_bad cannot be imported" in "".join(last_user_texts(model))
    assert sorted(branch.files) == ["test_greet.py"] and len(branch.tests) == 1


def test_agentgen_default_config_is_usable() -> None:
    cfg = Config().agent
    assert isinstance(cfg, AgentGenConfig) and cfg.strategy == "iterative"
    assert cfg.model.price().output_per_mtok > 0


def test_agentgen_revise_adds_only_new_tests_beside_the_suite_so_far(
    box: LocalSandbox, tmp_path: Path
) -> None:
    """A revision run (mutation-guided generation): the old suite is there to read, not rerun."""
    old = {"test_greet.py": HEAD + HELLO}
    model = ScriptedModel([bash("cat suite/test_greet.py"), write("test_mutants_shout.py", SHOUT), submit()])
    layout = Layout(prefix=str(box.root), python=sys.executable)
    generator = AgentGenerator(model=model, layout=layout)
    branch = generator.revise(context(box, tmp_path, review=True), old, "Kill these survivors.", "mutants")
    assert sorted(branch.files) == ["test_mutants_shout.py"]
    assert branch.tests == ["eval.tests.test_mutants_shout.test_shout"]
    assert set(branch.per_test_lines["eval.tests.test_mutants_shout.test_shout"]) == {"greet.c"}
    prompt = model.seen[0][1].content
    assert "Kill these survivors." in prompt
    assert "Your suite so far is in /tmp/tf-agent/suite (test_greet.py)" in prompt
    (shown,) = [m.content for m in model.seen[1] if m.role == "tool"]
    assert "def test_hello" in shown  # the agent could read its suite
    report = json.loads((tmp_path / "logs" / f"{branch.name}-mutants.json").read_text())
    assert [r["label"] for r in report["runs"]] == ["mutants"] and report["tests"] == 1


def test_agentgen_revise_without_a_new_test_is_a_generation_error(box: LocalSandbox, tmp_path: Path) -> None:
    layout = Layout(prefix=str(box.root), python=sys.executable)
    generator = AgentGenerator(model=ScriptedModel([submit()]), layout=layout)
    with pytest.raises(GenerationError, match="no usable tests.*mutants: submitted"):
        generator.revise(context(box, tmp_path), {"test_greet.py": HEAD + HELLO}, "Kill them.", "mutants")
