"""Agent harnesses authors already use, installed from PyPI into their own virtual environments
(none of them is a dependency of taskfoundry): made once per machine and kept in the user
cache, so a second run of the suite installs nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

HARNESSES = Path.home() / ".cache" / "taskfoundry" / "harnesses"
DONE = ".installed"  # written last: a venv without it was cut short and is made again


def harness_venv(name: str, requirements: tuple[str, ...]) -> Path:
    """The venv `HARNESSES/name` with `requirements` installed (pinned: the name says the version)."""
    venv = HARNESSES / name
    marker = venv / DONE
    if marker.is_file() and marker.read_text() == "\n".join(requirements):
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # --no-compile: pip would byte-compile every file of litellm and the rest (tens of seconds of
    # a core); the harness's Python compiles what it imports, once, into the venv
    pip = [
        str(venv / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--no-compile",
    ]
    done = subprocess.run([*pip, *requirements], capture_output=True, text=True, timeout=1200, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(requirements)} failed:\n{done.stderr[-3000:]}")
    marker.write_text("\n".join(requirements))
    return venv


def venv_python(venv: Path, code: str) -> str:
    """What `code` prints, run by the venv's own Python."""
    cmd = [str(venv / "bin" / "python"), "-c", code]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


# inspect_ai counts tokens with tiktoken's o200k_base, which tiktoken fetches from the web; the
# file, named by the sha1 of its URL as tiktoken's cache wants it, ships in litellm's wheel
O200K = "fb374d419588a4632f3f557e76b4b70aebbca790"
LITELLM = "litellm==1.110.2"


def tiktoken_cache() -> Path:
    """A TIKTOKEN_CACHE_DIR holding o200k_base, taken from litellm's wheel (from PyPI)."""
    cache = HARNESSES / "tiktoken"
    if (cache / O200K).is_file():
        return cache
    wheels = HARNESSES / "wheels"
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", LITELLM, "-d", str(wheels)]
    subprocess.run(pip, check=True, timeout=600)
    (wheel,) = wheels.glob("litellm-*.whl")
    cache.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        data = zf.read(f"litellm/litellm_core_utils/tokenizers/{O200K}")
    partial = cache / f"{O200K}.part"
    partial.write_bytes(data)
    partial.replace(cache / O200K)  # tiktoken checks the content's sha256 itself
    return cache


# inspect's Python API with its mock model: per sample (in task-id order, one at a time, so the
# one list of replies is read in order), its bash commands, then submit
INSPECT_MOCK = """
import json, sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, get_model
from taskfoundry.solve.inspect_eval import tasks
spec = json.loads(sys.argv[1])
outputs = []
for commands in spec["steps"]:
    outputs += [ModelOutput.for_tool_call("mockllm/model", "bash", {"command": c}) for c in commands]
    outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"}))
model = get_model("mockllm/model", custom_outputs=outputs)
task = tasks(tasks=spec["out"], kind=spec["kind"], limit=spec["limit"])
(log,) = eval(task, model=model, log_dir=sys.argv[2], display="none", max_samples=1)
errors = [m.error for s in log.samples or [] for m in s.messages if getattr(m, "error", None)]
assert not errors, errors  # every tool call ran: the grade is the work's, not a parse error's
"""


def inspect_mock_run(
    out: Path, steps: list[list[str]], log_dir: Path, kind: str | None = None, limit: int | None = None
) -> Any:
    """Run `taskfoundry/tasks` on `out` (of `kind`, the first `limit`) with the mock model making
    `steps`; the one log."""
    from inspect_ai.log import read_eval_log

    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tiktoken_cache())}
    spec = json.dumps({"out": str(out), "kind": kind, "limit": limit, "steps": steps})
    done = subprocess.run(
        [sys.executable, "-c", INSPECT_MOCK, spec, str(log_dir)],
        env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise AssertionError(done.stdout[-3000:] + done.stderr[-3000:])
    (path,) = log_dir.glob("*.eval")
    log = read_eval_log(path)
    assert log.status == "success", log.error
    return log


def graded_scores(log: Any) -> dict[str, Any]:
    """Each sample's `graded` score, by task id."""
    return {str(s.id): s.scores["graded"] for s in log.samples or []}
