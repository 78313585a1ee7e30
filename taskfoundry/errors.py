"""taskfoundry's exceptions: one type per package, branched on with `isinstance`, never by text.

Each carries its message and, where there is one, the log that explains it. A lower
layer does not know which stage called it (the base image is made inside the build
stage, a git command runs for a source or a build), so it never names one: the flow's
stage wrapper (`flows.tasks.run_stage`) turns whatever a stage raised into a
`StageError` that names the stage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class TaskfoundryError(Exception):
    """Base class: everything taskfoundry raises on bad input or a failed step."""

    def __init__(self, message: str = "", log: Path | None = None) -> None:
        self.message = message
        self.log = log
        super().__init__(message + (f" (log: {log})" if log else ""))

    def __reduce__(self) -> str | tuple[Any, ...]:
        # pickled with a failed task's state: rebuilt from its fields, not from its text
        if type(self).__init__ is TaskfoundryError.__init__:
            return (type(self), (self.message, self.log))
        return super().__reduce__()


class ConfigError(TaskfoundryError):
    """A malformed config, recipe or task file."""


class SandboxError(TaskfoundryError):
    """The sandbox itself failed (daemon error, container gone): infrastructure, not a verdict."""


class SourceError(TaskfoundryError):
    """`sources`: a source cannot be fetched or pinned."""


class SourceUnavailable(SourceError):
    """`sources`: the registry or archive has no such release (not a crash: skip the source)."""


class ImageError(TaskfoundryError):
    """`images`: an image cannot be made (debootstrap, `docker build`) or tagged."""


class BuildError(TaskfoundryError):
    """`builders`: no recipe, or the recipe does not build the program."""


class NoBuildSystem(BuildError):
    """`builders`: nothing in the tree was recognised and no complete `taskfoundry.yaml`
    declares a recipe: the one failure the build agent can take over."""


class GenerationError(TaskfoundryError):
    """`testgen`: a generator could not write a usable branch."""


class LeakError(TaskfoundryError):
    """`cleanroom`: the leak scan found what a worker must not see."""


class FilterError(TaskfoundryError):
    """The filter kept tests that then failed on gold: the task cannot be packaged."""


class MutationError(TaskfoundryError):
    """`mutation`: the analysis cannot run on this task (the reference does not rebuild in its
    image, the suite does not run there): the task gets a report saying why, not a failed build."""


class DockerUnavailable(SandboxError):
    """No Docker engine answers (DOCKER_HOST or the local socket): nothing can be graded here.
    A harness catches it and skips, as ProgramBench's adapters do."""


class ReleaseError(TaskfoundryError):
    """`catalog`: a release cannot be made or loaded; names the file or image."""


class FeatureError(TaskfoundryError):
    """The feature kind cannot make a task of this source (its tests do not run, none pass)."""


class StageError(TaskfoundryError):
    """A pipeline stage failed: names the stage (added by the flow's stage wrapper), the
    message and log of what failed in it (the cause is chained)."""

    def __init__(self, stage: str, message: str, log: Path | None = None) -> None:
        self.stage = stage
        super().__init__(message, log)
        self.args = (f"{stage} stage failed: {self.args[0]}",)

    def __reduce__(self) -> str | tuple[Any, ...]:
        return (type(self), (self.stage, self.message, self.log))

    @classmethod
    def wrap(cls, stage: str, exc: TaskfoundryError) -> StageError:
        return exc if isinstance(exc, StageError) else cls(stage, exc.message or str(exc), exc.log)


class PackageError(TaskfoundryError):
    """The task cannot be packaged (its reference submission does not build or pass)."""
