"""The build's secret seed: drawn once per build, kept where a worker never looks.

Every random choice of generation is drawn from it, so a worker who runs this project's public
code with its public default seeds cannot draw the suite's inputs. It lives under the out
directory's work area (reused when a build resumes, so its cached stages stay valid) and in the
task's hidden `reports/secret.json`; never in the cleanroom, its image history or task.yaml.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from pathlib import Path

from taskfoundry import atomic

SEED_BITS = 63  # too many to try: the branch name's digest does not give the seed back


def fresh_seed() -> int:
    return secrets.randbits(SEED_BITS)


def build_seed(work_dir: Path, task_id: str) -> int:
    """The seed of `task_id`'s build under `work_dir`: the one drawn before, or a fresh one."""
    path = work_dir / "secrets" / f"{task_id}.json"
    if path.is_file():
        return int(json.loads(path.read_text())["seed"])
    seed = fresh_seed()
    atomic.write_json(path, {"seed": seed})
    return seed


def seed_tag(seed: int) -> str:
    """A name for a seed's branch that does not give the seed back (tests.json keys the branch
    by a hash of its name, and task.yaml's readers see tests.json)."""
    return hashlib.sha256(f"taskfoundry-seed:{seed}".encode()).hexdigest()[:12]
