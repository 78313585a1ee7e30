"""ProgramBench's own harness on our tasks: mini-swe-agent 2.4.6 from PyPI (`mini-extra
programbench`, in a venv of its own with programbench 1.2.5) and its deterministic model, on the
csvq task (built once per session), with only the steps docs/agents.md gives: `taskfoundry
export --format programbench` into the folder its loader reads, the two variables the export
prints, and its own config with the machine's CPU and memory (its `--user agent` kept).

The scripted agent probes who it is, tries to copy the gold out five ways, and writes a
rebuild: csvq's own source with `count` off by one, so the grade is neither 0 nor 1. That
submission is graded by `taskfoundry eval` and by ProgramBench's own evaluator, which must agree.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from harness_support import graded_scores, harness_venv, inspect_mock_run, tiktoken_cache, venv_python
from inspect_ai.log import read_eval_log

from taskfoundry.cli import main
from taskfoundry.images.build import read_image_path
from taskfoundry.models import TaskYaml, load_yaml_model
from taskfoundry.naming import grading_image
from taskfoundry.sandbox.docker import DockerSandbox
from taskfoundry.sandbox.tarutil import extract_one

from conftest import EXAMPLES

pytestmark = pytest.mark.docker

MSA = ("mini-swe-agent==2.4.6", "programbench==1.2.5")
# the machine's CPU and memory: the only change to the harness's own programbench.yaml
RUN_ARGS = [
    "--rm", "--network", "none", "--cpus", "2", "--memory", "4g", "--memory-swap", "4g",
    "--user", "agent", "--cap-drop", "SYS_PTRACE",
]  # fmt: skip
COMPILE_SH = "#!/bin/sh\nset -e\nmake -s CFLAGS=-O2 csvq\nrm -f executable\ncp csvq executable\n"
STEAL = (
    "id -u; id -g; echo $HOME; "
    "cat ./executable > /tmp/a 2>/dev/null; echo cat=$?; "
    "cp ./executable stolen 2>/dev/null; echo cp=$?; "
    "dd if=./executable of=/tmp/c 2>/dev/null; echo dd=$?; "
    "python3 -c \"open('executable','rb').read()\" 2>/dev/null; echo py=$?; "
    "ls /reference/executable 2>/dev/null; echo ls=$?"
)
STOLE_NOTHING = ["1000", "1000", "/home/worker", "cat=1", "cp=1", "dd=1", "py=1", "ls=2"]


def rebuild_tarball() -> bytes:
    """csvq's own source and Makefile with `count` printing one more than it counts."""
    out = io.BytesIO()
    root = EXAMPLES / "csvq"
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path in [root / "Makefile", *sorted((root / "src").iterdir())]:
            data = path.read_bytes()
            if path.name == "commands.c":
                before = b'fprintf(out->fp, "%lu\\n", n);'
                assert before in data, "the planted bug's line moved"
                data = data.replace(before, b'fprintf(out->fp, "%lu\\n", n + 1);')
            info = tarfile.TarInfo(str(path.relative_to(root)))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("compile.sh")
        info.size, info.mode = len(COMPILE_SH), 0o755
        tar.addfile(info, io.BytesIO(COMPILE_SH.encode()))
    return out.getvalue()


def turn(command: str) -> dict[str, Any]:
    """One reply of mini-swe-agent's DeterministicModel: one bash action."""
    return {
        "role": "assistant",
        "content": f"running {command[:30]}",
        "extra": {"actions": [{"command": command}]},
    }


def model_config() -> dict[str, Any]:
    unpack = f"echo {base64.b64encode(rebuild_tarball()).decode()} | base64 -d | tar -xzf - && ./compile.sh"
    outputs = [
        turn(STEAL),
        turn(unpack + " && echo built"),
        turn("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    return {
        "model": {"model_class": "deterministic", "model_name": "deterministic", "outputs": outputs},
        "agent": {"step_limit": 10},
    }


@pytest.fixture(scope="module")
def csvq(example_task: Callable[[str], Path]) -> Path:
    return example_task("csvq")


@pytest.fixture(scope="module")
def msa() -> Path:
    return harness_venv("mini-swe-agent-2.4.6", MSA)


def exported_env(stdout: str) -> dict[str, str]:
    """The `export NAME=value` lines `taskfoundry export` prints."""
    found = re.findall(r"^  export (PROGRAMBENCH_\w+)=(.*)$", stdout, flags=re.M)
    return {name: value.strip("'") for name, value in found}


@pytest.fixture(scope="module")
def harness_run(msa: Path, csvq: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """mini-extra programbench on the exported csvq task; its output folder and the env."""
    task_id = csvq.name
    pb_tasks = Path(venv_python(msa, "from programbench.constants import TASKS_DIR; print(TASKS_DIR)"))
    exported = CliRunner().invoke(
        main, ["export", str(csvq.parent.parent), str(pb_tasks), "--format", "programbench", "--id", task_id]
    )
    assert exported.exit_code == 0, exported.output
    env = exported_env(exported.stdout)
    assert set(env) == {"PROGRAMBENCH_DOCKER_ORG", "PROGRAMBENCH_BLOB_DIR"}
    work = tmp_path_factory.mktemp("msa")
    (work / "model.yaml").write_text(yaml.safe_dump(model_config()))
    (work / "machine.yaml").write_text(yaml.safe_dump({"environment": {"run_args": RUN_ARGS}}))
    out = work / "output"
    run_env = {
        **os.environ,
        **env,
        "MSWEA_GLOBAL_CONFIG_DIR": str(work / "config"),
        "MSWEA_SILENT_STARTUP": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm would fetch its price list from the web
    }
    cmd = [
        str(msa / "bin" / "mini-extra"),
        "programbench",
        "--filter",
        f"^{re.escape(task_id)}$",
        "-o",
        str(out),
    ]
    cmd += ["-c", "programbench", "-c", str(work / "machine.yaml"), "-c", str(work / "model.yaml")]
    try:
        done = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=900, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        yield {"out": out, "env": env, "task_id": task_id, "venv": msa, "pb_tasks": pb_tasks, "work": work}
    finally:
        shutil.rmtree(pb_tasks / task_id, ignore_errors=True)


def observations(traj: dict[str, Any]) -> list[str]:
    """The command outputs the harness handed back to its model, in order."""
    texts = []
    for msg in traj["messages"]:
        content = msg.get("content")
        if msg.get("role") in ("user", "tool") and isinstance(content, str) and "<returncode>" in content:
            texts.append(content)
    return texts


def gold_bytes(docker_client, image: str) -> bytes:  # type: ignore[no-untyped-def]
    found = read_image_path(docker_client, image, "/workspace/executable")
    assert found is not None
    return extract_one([found])


def test_the_harness_runs_as_agent_and_cannot_read_the_gold(
    harness_run: dict[str, Any], docker_client
) -> None:  # type: ignore[no-untyped-def]
    task_id = harness_run["task_id"]
    traj = json.loads((harness_run["out"] / task_id / f"{task_id}.traj.json").read_text())
    assert traj["info"]["exit_status"] == "Submitted", traj["info"]
    seen = observations(traj)
    stole = re.search(r"<output>\n(.*?)</output>", seen[0], flags=re.S)
    assert stole is not None and stole.group(1).split() == STOLE_NOTHING, seen[0]
    assert "built" in seen[1], seen[1]
    # what left the container: the workspace as `agent` packed it, without a byte of the gold
    task = load_yaml_model(
        Path(harness_run["env"]["PROGRAMBENCH_BLOB_DIR"]) / task_id / "task.yaml", TaskYaml
    )
    image = grading_image(task.images)
    gold = gold_bytes(docker_client, image)
    digest = hashlib.sha256(gold).hexdigest()
    with tarfile.open(harness_run["out"] / task_id / "submission.tar.gz") as tar:
        members = {m.name.removeprefix("./"): m for m in tar.getmembers()}
        contents = [tar.extractfile(m).read() for m in members.values() if m.isfile()]  # type: ignore[union-attr]
    assert {"compile.sh", "src/commands.c", "Makefile"} <= set(members)
    assert "stolen" not in members and digest not in {hashlib.sha256(c).hexdigest() for c in contents}
    assert all(gold[:4096] not in c for c in contents)
    # the target is real: the same command as root (what a harness without `--user agent` gives)
    # reads it, so it is the agent's uid, not an empty or missing file, that stops the attacks
    with DockerSandbox(image, client=docker_client) as box:
        as_root = box.exec("sha256sum /workspace/executable", timeout=60, user="root")
    assert as_root.ok and as_root.stdout.decode().split()[0] == digest


READ_EVAL = """
import json, sys
from programbench.eval.eval import EvaluationResult
from programbench.utils.load_data import get_ignored_tests
r = EvaluationResult.model_validate_json(open(sys.argv[1]).read())
r = r.without_ignored(get_ignored_tests(json.load(open(sys.argv[2]))))
print(r.n_resolved, len(r), r.error_code or "")
"""


@pytest.fixture(scope="module")
def our_grade(harness_run: dict[str, Any]) -> dict[str, Any]:
    """`taskfoundry eval` of a copy of the harness's output folder: the task's summary line."""
    ours = harness_run["work"] / "ours"  # each evaluator writes <id>/<id>.eval.json: a copy each
    shutil.copytree(harness_run["out"], ours)
    graded = CliRunner().invoke(
        main, ["eval", str(ours), "--tasks", harness_run["env"]["PROGRAMBENCH_BLOB_DIR"]]
    )
    assert graded.exit_code == 0, graded.output
    (score,) = json.loads((ours / "summary.json").read_text())["tasks"]
    assert score["error_code"] is None and 0 < score["passed"] < score["tests"], score
    return dict(score)


def test_its_submission_grades_the_same_by_taskfoundry_and_by_programbench(
    harness_run: dict[str, Any], our_grade: dict[str, Any]
) -> None:
    task_id, env, score = harness_run["task_id"], harness_run["env"], our_grade
    theirs = harness_run["work"] / "theirs"
    shutil.copytree(harness_run["out"], theirs)
    pb = [str(harness_run["venv"] / "bin" / "programbench"), "eval", str(theirs), "--docker-cpus", "2"]
    done = subprocess.run(
        pb, env={**os.environ, **env}, capture_output=True, text=True, timeout=1800, check=False
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    tests_json = harness_run["pb_tasks"] / task_id / "tests.json"
    read = [str(harness_run["venv"] / "bin" / "python"), "-c", READ_EVAL]
    line = subprocess.run(
        [*read, str(theirs / task_id / f"{task_id}.eval.json"), str(tests_json)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert [int(line[0]), int(line[1])] == [score["passed"], score["tests"]], (line, score)


# -- inspect_ai: the `taskfoundry/tasks` task, the `taskfoundry` sandbox, the graded scorer


def test_inspect_eval_with_its_mock_model_leaves_a_log_with_the_grade_eval_gives(
    csvq: Path, tmp_path: Path, our_grade: dict[str, Any]
) -> None:
    out = csvq.parent.parent
    # the mock model's tool calls write the same rebuild the mini-swe-agent run wrote
    unpack = f"cd /workspace && echo {base64.b64encode(rebuild_tarball()).decode()} | base64 -d | tar -xzf -"
    (score,) = graded_scores(
        inspect_mock_run(out, [[unpack + " && ./compile.sh"]], tmp_path / "logs")
    ).values()
    assert score.answer == f"{our_grade['passed']}/{our_grade['tests']}", (score, our_grade)
    assert score.value == pytest.approx(our_grade["pass_rate"])
    # `inspect eval` on the command line, the mock's default reply (no tool call): the start
    # state graded, as eval grades an empty submission: no compile.sh, a score of 0
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache())}
    cli = [str(Path(sys.executable).parent / "inspect"), "eval", "taskfoundry/tasks", "-T", f"tasks={out}"]
    cli += ["--model", "mockllm/model", "-T", "message_limit=4", "--log-dir", str(tmp_path / "cli")]
    ran = subprocess.run(cli, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    (log,) = (tmp_path / "cli").glob("*.eval")
    (idle,) = graded_scores(read_eval_log(log)).values()
    assert idle.value == 0 and idle.answer.startswith("0/"), idle


def test_the_inspect_sandbox_runs_as_the_worker_and_cannot_read_the_gold(csvq: Path, tmp_path: Path) -> None:
    """The mock model's bash calls try the gold through inspect's own tools; the log holds what
    they got. A tool that asks for root is refused; with that refusal bypassed (the box's own
    exec as root), the same container reads the gold: the worker's uid is what stops it."""
    steps = [[STEAL, "cat /workspace/executable | head -c 4 | od -c"]]
    (sample,) = inspect_mock_run(csvq.parent.parent, steps, tmp_path / "logs").samples or []
    tool_out = [str(m.content) for m in sample.messages if m.role == "tool"]
    # the worker's own execute-only copy is at /reference here (ls finds it; nothing reads it)
    assert tool_out[0].split() == [*STOLE_NOTHING[:-1], "/reference/executable", "ls=0"], tool_out[0]
    assert "Permission denied" in tool_out[1] and "E   L   F" not in tool_out[1], tool_out[1]

    from inspect_ai.util import SandboxUserUnsupportedError

    from taskfoundry.solve.inspect_eval import WorkerSandbox

    async def as_root() -> tuple[bool, bytes]:
        envs = await WorkerSandbox.sample_init("t", str(csvq), {})
        try:
            (box,) = envs.values()
            assert isinstance(box, WorkerSandbox)
            try:
                await box.exec(["cat", "/workspace/executable"], user="root")
                refused = False
            except SandboxUserUnsupportedError:
                refused = True
            read = box.box.exec(["sha256sum", "/workspace/executable"], timeout=60, user="0:0")
            return refused, read.stdout
        finally:
            await WorkerSandbox.sample_cleanup("t", str(csvq), envs, False)

    refused, digest = asyncio.run(as_root())
    assert refused and len(digest.split()[0]) == 64, digest
