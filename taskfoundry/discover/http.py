"""Bounded, cached GETs for discovery: a request budget per registry, answers kept on disk.

A cached answer (a 404 included: "no such project" is an answer too) younger than the TTL
is reused without a request, so a second run over the same window costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from taskfoundry import atomic
from taskfoundry.errors import SourceError, SourceUnavailable
from taskfoundry.sources.fetch import get_bytes

_MISSING = b"\0taskfoundry:404\0"  # what a cached 404 holds (no registry answers these bytes)


class BudgetSpent(SourceError):
    """The registry's request budget for this run is spent."""


class Client:
    """GETs through the shared fetch helper, counted against `max_requests`, cached under `root`."""

    def __init__(self, root: Path, max_requests: int, timeout: float, ttl_hours: float) -> None:
        self.root = root
        self.max_requests = max_requests
        self.timeout = timeout
        self.ttl = ttl_hours * 3600
        self.requests = 0
        self.cached = 0

    def _path(self, url: str, headers: dict[str, str]) -> Path:
        key = hashlib.sha256(json.dumps([url, sorted(headers.items())]).encode()).hexdigest()
        return self.root / key[:2] / key

    def get(self, url: str, headers: dict[str, str] | None = None) -> bytes:
        headers = headers or {}
        path = self._path(url, headers)
        if path.exists() and time.time() - path.stat().st_mtime < self.ttl:
            self.cached += 1
            data = path.read_bytes()
        else:
            if self.requests >= self.max_requests:
                raise BudgetSpent(f"request budget spent ({self.max_requests}) before {url}")
            self.requests += 1
            try:
                data = get_bytes(url, timeout=self.timeout, headers=headers)
            except SourceUnavailable:
                data = _MISSING
            atomic.write_bytes(path, data)
        if data == _MISSING:
            raise SourceUnavailable(f"not available: {url} (404 Not Found)")
        return data

    def json(self, url: str, headers: dict[str, str] | None = None) -> Any:
        try:
            return json.loads(self.get(url, headers))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SourceError(f"{url}: not JSON ({exc})") from exc
