"""What the worker sees, per kind, read from the task directory alone (task.yaml, prompt.md):
the start-state image, the workspace, the task text, and which workspace files are the answer.

Nothing of tests/, solution.tar.gz, reports/ or the `:task` image ever reaches the worker: the
container is the task's `:task_cleanroom` image, and of the task directory only prompt.md is
read (the function kind's signature and docstring, the feature kind's interface).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taskfoundry.agent.prompts import load_template, render
from taskfoundry.errors import ConfigError
from taskfoundry.layout import WORKSPACE
from taskfoundry.models import TaskYaml, load_yaml_model

TEMPLATES = "taskfoundry.solve"
PROMPT_FILE = "prompt.md"  # the function and feature kinds write the worker's task text here
# the answer is the workspace, less what the worker was given and cannot have changed usefully:
# the program kind's execute-only gold (unreadable to the worker; compile.sh makes `./executable`
# again at grading), git's own directory, and Python's bytecode caches at any depth
EXCLUDED = ("./executable", "./.git", "__pycache__")


@dataclass(frozen=True)
class WorkerView:
    """One task as its worker gets it."""

    task_id: str
    kind: str
    language: str
    difficulty: str
    image: str  # the task's `:task_cleanroom` image
    workspace: str
    task_text: str  # the task, as the worker reads it (also at PROMPT_PATH in the container)
    answer: str  # what the submission must hold, in a line

    def prompt_variables(self) -> dict[str, str]:
        return {
            "task_id": self.task_id,
            "kind": self.kind,
            "language": self.language,
            "task_text": self.task_text,
            "answer": self.answer,
        }


def load_view(task_dir: Path) -> WorkerView:
    """The worker's view of the task in `task_dir`; ConfigError for an unknown kind."""
    task = load_yaml_model(task_dir / "task.yaml", TaskYaml)
    if task.kind == "program":
        text = render(
            load_template(TEMPLATES, "program.md"),
            {"language": task.language, "workspace": WORKSPACE},
            "program task",
        )
        answer = "source files and an executable `compile.sh` that builds `./executable`"
    elif task.kind in ("function", "feature"):
        text = (task_dir / PROMPT_FILE).read_text(encoding="utf-8")
        answer = (
            f"`{task.executable}`: a Python module"
            if task.kind == "function"
            else "the repository (or, given only an interface, the modules it names) as you leave it"
        )
    else:
        raise ConfigError(f"{task_dir}: no worker view for kind {task.kind!r}")
    return WorkerView(
        task_id=task.task_id,
        kind=task.kind,
        language=task.language,
        difficulty=task.difficulty,
        image=task.images.task_cleanroom,
        workspace=WORKSPACE,
        task_text=text,
        answer=answer,
    )
