"""The leak scan: what a worker in the cleanroom could learn beyond the binary and its docs.

Two halves. Inside a container of the image, `assets/leak_scan.py` (stdlib only) walks the
whole file system as root and judges every path by what the worker may read. On the host,
where tree-sitter is, the text files it collected are parsed (a source file renamed to
.txt still parses) and compared with the original source for verbatim runs (shingles).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import tarfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from taskfoundry import atomic
from taskfoundry.assets import asset
from taskfoundry.errors import SandboxError
from taskfoundry.kinds.program.cleanroom import assets, shingles
from taskfoundry.kinds.program.cleanroom.docs import collect_docs
from taskfoundry.kinds.program.cleanroom.reports import LeakFinding, LeakReport
from taskfoundry.sandbox.base import Sandbox
from taskfoundry.syntax.languages import ANY_SOURCE, PROGRAM_SOURCE

log = logging.getLogger(__name__)

_TEST_DIRS = {"test", "tests", "testdata", "testing", "t", "spec", "fixtures"}
_DOC_DIRS = {"doc", "docs", "man", "documentation", "info"}
# Documentation formats: a cleanroom doc with the same bytes is documentation too
# (GNU's doc/stamp-vti is doc/version.texi), not a copy of the implementation.
_DOC_EXT = {".texi", ".texinfo", ".txi", ".info", ".md", ".rst", ".adoc", ".pod", ".man"}


class LeakScanConfig(BaseModel):
    """Knobs of the leak scan."""

    shingle_tokens: int = Field(40, ge=8, description="shortest verbatim source run reported")
    max_text_bytes: int = Field(256 * 1024, description="largest text file pulled for parsing")
    max_total_text_bytes: int = Field(64 << 20, description="cap on all text pulled")
    max_hash_bytes: int = Field(64 << 20, description="largest file hashed against the source")
    max_parse_error_ratio: float = Field(0.02, description="share of bytes in ERROR nodes allowed")
    anonymous_name: str = Field("worker", description="the one allowed git author name")
    anonymous_email: str = Field("worker@localhost", description="the one allowed git author email")
    worker: str = Field("1000:1000", description="uid:gid of the worker")
    workspace: str = Field("/workspace", description="the worker's workspace")
    captured_usage: str = Field(
        "docs/usage/",
        description="workspace folder of captured --help output: not compared "
        "byte for byte with the source (a test may expect the same bytes), still parsed",
    )
    timeout: float = Field(900, description="seconds allowed for the in-container walk")


@dataclass(frozen=True)
class Pristine:
    """The scanned container is fresh from an image that is a base image plus one layer,
    and the layer writes only under `roots` (absolute paths). Every other directory is the
    base's: its entries are read from `listing`, a file on the host that scans of
    containers of the same base (named by the base's image id) fill in as they go."""

    roots: tuple[str, ...]
    listing: Path


def scan(
    sandbox: Sandbox,
    image: str,
    gold_sha256: str,
    *,
    source: Path | None = None,
    config: LeakScanConfig | None = None,
    gold_readable: bool = False,
    allowed: dict[str, str] | None = None,
    pristine: Pristine | None = None,
    index: shingles.SourceIndex | None = None,
) -> LeakReport:
    """Scan the running container `sandbox` of `image`; `source` (the original tree) enables
    the content and verbatim-run checks. `gold_readable`: a source-visible task, whose gold
    at the workspace must be 0755 (every other readable copy is still a leak). `allowed`:
    absolute path -> sha256 of files deliberately copied from the source (test assets),
    exempt from the source-copy check at exactly that path with exactly those bytes.
    `pristine`: only for a container nothing has changed (the cleanroom stage's); the walk
    then lists the base's directories from the listing instead of the file system (every
    check still runs on every file). `index`: `source`'s shingle index, when the caller made it."""
    cfg = config or LeakScanConfig()
    start = time.monotonic()
    with ThreadPoolExecutor(1) as pool:
        # the source's shingle index is made on the host while the container walks
        indexing = (
            pool.submit(shingles.build_index, source, cfg.shingle_tokens) if source and not index else None
        )
        remote_cfg = {
            "gold_mode": 0o755 if gold_readable else 0o111,
            "allowed": allowed or {},
            "source_hashes": source_hashes(source) if source else {},
        }
        remote, texts = _run_remote(sandbox, gold_sha256, remote_cfg, cfg, pristine)
        index = indexing.result() if indexing else index
    findings = [LeakFinding(**f) for f in remote["findings"]]
    findings += text_findings(texts, index, cfg.max_parse_error_ratio)
    findings.sort(key=lambda f: (f.path, f.kind))
    verdict: Literal["clean", "leaky"] = "leaky" if findings else "clean"
    report = LeakReport(
        image=image,
        verdict=verdict,
        findings=findings,
        seconds=round(time.monotonic() - start, 3),
        files_scanned=remote["files"],
        texts_parsed=len(texts),
        source_checked=source is not None,
        notes=remote["notes"],
    )
    log.info("leak scan of %s: %s, %d findings in %.1fs", image, verdict, len(findings), report.seconds)
    return report


def source_hashes(root: Path) -> dict[str, tuple[str, str]]:
    """sha256 -> (kind, relative path) of every source-tree file the cleanroom must not carry:
    all but documentation (what `collect_docs` picks, and other doc files, which are
    matched by shingles instead)."""
    docs = set(collect_docs(root))
    out: dict[str, tuple[str, str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if shingles.SKIP_DIRS & set(rel.parts) or not path.is_file() or path.is_symlink():
            continue
        if rel.as_posix() in docs or path.stat().st_size < 64:
            continue
        test = _is_test(rel)
        if not test and _is_doc(rel):
            continue
        kind = "hidden_test" if test else "source_copy"
        out.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), (kind, rel.as_posix()))
    return out


def _is_test(rel: Path) -> bool:
    name = rel.name
    return (
        any(p in _TEST_DIRS for p in rel.parts[:-1])
        or name.startswith("test_")
        or name.endswith(("_test.go", "_test.py", "_test.rs"))
    )


def _is_doc(rel: Path) -> bool:
    """Documentation by format or place; never code (a .c under doc/ is still source)."""
    ext = rel.suffix.lower()
    if ext in _DOC_EXT or re.fullmatch(r"\.[1-8]\w*", ext):
        return True
    in_doc_dir = any(p.lower() in _DOC_DIRS for p in rel.parts[:-1])
    code = ext in ANY_SOURCE or ext in assets.BUILD_EXT or rel.name.lower() in assets.BUILD_NAMES
    return in_doc_dir and not code


def text_findings(
    texts: dict[str, bytes], index: shingles.SourceIndex | None, max_error_ratio: float
) -> list[LeakFinding]:
    """Texts that parse as source, and verbatim runs of the original source inside texts."""
    out: list[LeakFinding] = []
    for path, data in sorted(texts.items()):
        hit = shingles.parse_as_source(data, max_error_ratio)
        if hit is not None:
            out.append(
                LeakFinding(
                    path=path,
                    kind="source_file",
                    evidence=(
                        f"parses as {hit.language}: {hit.definitions} definitions from line {hit.first_line}"
                    ),
                )
            )
        if index is None:
            continue
        for run in shingles.find_runs(index, data.decode("utf-8", "replace")):
            out.append(
                LeakFinding(
                    path=path,
                    kind="verbatim_source",
                    evidence=(
                        f"lines {run.first_line}-{run.last_line}: {run.tokens} tokens verbatim from "
                        f"{run.source_file}:{run.source_line}"
                    ),
                )
            )
    return out


def _run_remote(
    sandbox: Sandbox, gold: str, extra: dict[str, Any], cfg: LeakScanConfig, pristine: Pristine | None
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Run the in-container walk as root; return its JSON and the text files it collected."""
    where = f"/opt/.tf-leakscan-{uuid.uuid4().hex[:12]}"
    uid, gid = (int(x) for x in cfg.worker.split(":"))
    remote_cfg = {
        "gold_sha256": gold,
        "source_ext": sorted(PROGRAM_SOURCE),
        "workspace": cfg.workspace,
        "worker_uid": uid,
        "worker_gid": gid,
        "anonymous_name": cfg.anonymous_name,
        "anonymous_email": cfg.anonymous_email,
        **extra,
        "max_hash_bytes": cfg.max_hash_bytes,
        "max_text_bytes": cfg.max_text_bytes,
        "max_total_text_bytes": cfg.max_total_text_bytes,
        "captured_dir": f"{cfg.workspace}/{cfg.captured_usage}",
        "exclude": [where],
        "out_tar": f"{where}/texts.tar",
        "out_json": f"{where}/result.json",
    }
    known = _read_listing(pristine.listing) if pristine else {}
    if pristine:  # the scratch directory is under /opt: a root too
        remote_cfg |= {
            "layer_roots": [*pristine.roots, "/opt"],
            "listing_in": f"{where}/listing.json" if known else None,
            "listing_out": f"{where}/listed.json",
        }
    code = asset("program/leak_scan.py")
    _root(sandbox, ["mkdir", "-m", "755", "-p", where], 60)
    try:
        sandbox.put_file(code, f"{where}/leak_scan.py", mode=0o644)
        sandbox.put_file(json.dumps(remote_cfg).encode(), f"{where}/config.json", mode=0o600)
        if known:
            sandbox.put_file(json.dumps(known).encode(), f"{where}/listing.json", mode=0o600)
        _root(sandbox, ["python3", f"{where}/leak_scan.py", f"{where}/config.json"], cfg.timeout)
        result: dict[str, Any] = json.loads(sandbox.get_file(f"{where}/result.json"))
        texts = _untar(sandbox.get_file(f"{where}/texts.tar"))
        if pristine:
            listed = json.loads(sandbox.get_file(f"{where}/listed.json"))
            if listed["dirs"]:
                merged = {part: {**known.get(part, {}), **listed[part]} for part in ("dirs", "files")}
                atomic.write_text(pristine.listing, json.dumps(merged))
    finally:
        _root(sandbox, ["rm", "-rf", where], 60)
    return result, texts


def _read_listing(path: Path) -> dict[str, Any]:
    """The recorded listing; an unreadable one is no listing (everything is read live)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and set(data) == {"dirs", "files"} else {}


def _root(sandbox: Sandbox, cmd: list[str], timeout: float) -> None:
    res = sandbox.exec(cmd, timeout=timeout, user="0:0")
    if not res.ok:
        raise SandboxError(f"leak scan: {cmd[0]} failed ({res.exit_code}): {res.text()[-2000:]}")


def _untar(data: bytes) -> dict[str, bytes]:
    texts: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                texts["/" + member.name] = handle.read()
    return texts
