"""The catalog of built tasks: load, filter, count, dump, grade, and release them.

from taskfoundry.catalog import Catalog
cat = Catalog.load("out")
for task in cat.filter(language="rust", difficulty="easy").limit(5).tasks():
    print(task.task_id, task.cleanroom_image)
"""

from taskfoundry.catalog.catalog import Catalog, LoadError
from taskfoundry.catalog.grading import Grade
from taskfoundry.catalog.records import TaskRecord
from taskfoundry.errors import DockerUnavailable, ReleaseError

__all__ = ["Catalog", "DockerUnavailable", "Grade", "LoadError", "ReleaseError", "TaskRecord"]
