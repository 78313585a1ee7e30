"""Probes (one run of the program) and the host side of the in-sandbox probe runner."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from taskfoundry.assets import asset
from taskfoundry.assets.grading.tfrun import CLOCK, CLOCK_MARK, UNPACKED_AT, unpacked
from taskfoundry.errors import SandboxError
from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.sandbox.base import Sandbox

RUNNER_PATH = "/tmp/tf_probe_runner.py"
HARVESTED = "harvested"  # a call the project's own tests made (testgen.harvest)

# What wrote a probe, as reports/generate.json counts it: the explorer's own kinds of candidate
# grouped by where their inputs came from.
FAMILIES = {
    "explore": "usage",
    "file": "usage",
    "option": "usage",
    "stdin": "usage",
    "bytes": "usage",
    "docs": "docs",
    "dual": "docs",
    "data": "runtime_data",
    "hypothesis": "random",
    "random": "random",
    "output": "random",
    HARVESTED: "harvested",
    "guided": "guided",
    "agent": "agent",
}


def family(origin: str) -> str:
    """The report's origin of a probe's own `origin` (usage, docs, runtime_data, random,
    harvested, guided, agent)."""
    return FAMILIES.get(origin, origin)


@dataclass(frozen=True)
class Probe:
    """Arguments, stdin (text, or bytes for binary input) and input files for one run.
    `files` maps relative path -> text (bytes for a binary input: a compressed data file)."""

    args: tuple[str, ...]
    stdin: str | bytes = ""
    files: tuple[tuple[str, str | bytes], ...] = ()
    origin: str = "explore"

    @property
    def key(self) -> str:
        return json.dumps([self.args, jsonable(self.stdin), [(n, jsonable(c)) for n, c in self.files]])

    def to_job(self, ident: str) -> dict[str, Any]:
        return {
            "id": ident,
            "args": list(self.args),
            "stdin": jsonable(self.stdin),
            "files": {name: jsonable(content) for name, content in self.files},
        }


def jsonable(data: str | bytes) -> str | dict[str, str]:
    """Text as it is, bytes as {"b64": ...}: JSON for a probe's stdin and files."""
    return data if isinstance(data, str) else {"b64": base64.b64encode(data).decode()}


@dataclass
class Outcome:
    """What a probe did. Text fields are None when the output was not UTF-8."""

    exit_code: int
    stdout: str | None
    stderr: str | None
    timed_out: bool
    truncated: bool
    files: dict[str, str | None]
    covered: dict[str, set[int]] = field(default_factory=dict)
    total: dict[str, set[int]] = field(default_factory=dict)
    infects: set[int] | None = None  # a watch build's run: the mutants it infects (switch numbers)
    not_run: bool = False  # past the job's stop_at: not started (and timed_out, so it tells nothing)
    seconds: float = 0.0  # the call's wall time, start to exit

    @property
    def signature(self) -> tuple[Any, ...]:
        return (self.exit_code, self.stdout, self.stderr, sorted(self.files.items(), key=str))

    @property
    def writable(self) -> bool:
        """Whether this can become an exact-output test: stdout and stderr text, whole, and
        not showing today's date (a clock: gobuster's `2026/11/27 20:31:53` passed two gold
        runs in one second and failed the reference's grade three minutes later) but as a
        masked stamp. A file it wrote that is not text is tested as written, not by content:
        appstream-generator writes its LMDB databases on every call that gets past its config,
        and none of those calls was kept."""
        text_ok = self.stdout is not None and self.stderr is not None
        whole = text_ok and not self.timed_out and not self.truncated
        texts = (self.stdout or "", self.stderr or "", *self.files.values())
        how_built = any(r.search(t or "") for r in (_GO_BUILD, UNPACKED_AT) for t in texts)
        return whole and not shows_the_date(*texts) and not how_built


# the Go toolchain's build settings a program prints (debug.BuildInfo: gobuster's --version):
# how the gold was built (CGO_ENABLED, flags, VCS stamp), which no rebuild reproduces
_GO_BUILD = re.compile(r"^\s*build\s+(CGO_\w+|GO\w+|-\w+|vcs[.\w]*)=", re.M)


def _today() -> set[datetime]:
    """Today and yesterday, UTC and local: the days a clock the program reads may show."""
    now = datetime.now(UTC)
    return {d for t in (now, now.astimezone()) for d in (t, t - timedelta(days=1))}


def mask_clock(text: str | None) -> str | None:
    """`text` with each date-and-time stamp of today or yesterday written CLOCK_MARK (Go's log
    prefix: gobuster's every error): the test then compares the rest (tfrun's `clock`). A
    stamp of another day is the program's data, not its clock, and stays."""
    if text is None:
        return None
    days = {f"{d:%Y-%m-%d}" for d in _today()}
    return CLOCK.sub(lambda m: CLOCK_MARK if m[0][:10].replace("/", "-") in days else m[0], text)


def shows_the_date(*texts: str | None) -> bool:
    """Whether any text holds today's or yesterday's date (UTC or local) as clocks print it."""
    days = _today()
    stamps = {f"{d:%Y-%m-%d}" for d in days} | {f"{d:%Y/%m/%d}" for d in days}
    stamps |= {f"{d:%d/%b/%Y}" for d in days} | {f"{d:%a %b} {d.day:2d}" for d in days}
    return any(stamp in text for text in texts if text for stamp in stamps)


@dataclass(frozen=True)
class RunnerJob:
    executable: str
    coverage: str = "none"
    cov_root: str = "/cov"
    go_module: str = ""
    timeout: float = 10.0
    exclude: tuple[str, ...] = ()  # path prefixes left out of first-party coverage
    argv0: str = WORKSPACE_EXECUTABLE  # what the program sees as its own name, as in the cleanroom
    output_cap: int = 256 * 1024
    env: dict[str, str] = field(default_factory=dict)  # more variables for the program (a mutant's switch)
    workroot: str = "/tmp"  # where the runner makes each probe's directory and output files
    watch: str = ""  # a watch build's file (schemata.INFECTED): each outcome's `infects` from it
    parallel: int = 1  # probes run at once (a watch build's run one at a time)
    # wall clock (time.time(), the host's and the container's alike) past which no probe of the
    # job starts, 0: none. One exec of a slow program's many probes ran 15 minutes past a deadline
    stop_at: float = 0.0


def install_runner(sandbox: Sandbox) -> None:
    code = asset("program/probe_runner.py")
    sandbox.put_file(code, RUNNER_PATH, mode=0o755)


def run_probes(
    sandbox: Sandbox, job: RunnerJob, probes: list[Probe], envs: list[dict[str, str]] | None = None
) -> list[Outcome]:
    """Run `probes` in one sandbox exec; returns outcomes in the same order. `envs`: each
    probe's own variables besides the job's (a mutant's switch)."""
    if not probes:
        return []
    jobs = [p.to_job(f"p{i}") for i, p in enumerate(probes)]
    for one, env in zip(jobs, envs, strict=True) if envs is not None else ():
        one["env"] = env
    payload = {**job.__dict__, "probes": jobs}
    budget = (job.timeout + 5) * len(probes) + 60  # as if one at a time, whatever `parallel`
    res = sandbox.exec(
        ["python3", RUNNER_PATH], timeout=budget, stdin=json.dumps(payload).encode(), workdir="/tmp"
    )
    if res.exit_code != 0 or res.truncated:
        raise SandboxError(f"probe runner failed ({res.exit_code}): {res.text()[-2000:]}")
    return [_outcome(r) for r in json.loads(res.stdout)["results"]]


def _text(blob: dict[str, Any]) -> str | None:
    return mask_clock(blob.get("text"))


def _stream(blob: dict[str, Any]) -> str | None:
    """stdout or stderr as a test reads it through tfrun's `run`: without the lines naming where
    a Python gold unpacked itself (ansible-lint's every warning), its clock masked."""
    text = blob.get("text")
    return mask_clock(unpacked(text)) if text is not None else None


def _outcome(raw: dict[str, Any]) -> Outcome:
    return Outcome(
        exit_code=raw["exit_code"],
        stdout=_stream(raw["stdout"]),
        stderr=_stream(raw["stderr"]),
        timed_out=raw["timed_out"],
        truncated=raw["truncated"],
        files={k: _text(v) for k, v in raw["files"].items()},
        covered={k: set(v) for k, v in raw.get("covered", {}).items()},
        total={k: set(v) for k, v in raw.get("total", {}).items()},
        infects=set(raw["infects"]) if "infects" in raw else None,
        not_run=bool(raw.get("not_run")),
        seconds=float(raw.get("seconds", 0.0)),
    )
