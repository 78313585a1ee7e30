"""What discovery reports: one row per project looked at, a verdict per task kind."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, Field

KINDS = ("program", "function", "feature")
Registry = Literal["pypi", "crates", "debian"]


class Verdict(BaseModel):
    candidate: bool | None = Field(description="None: not checked (the reason says why)")
    reason: str


def yes(reason: str) -> Verdict:
    return Verdict(candidate=True, reason=reason)


def no(reason: str) -> Verdict:
    return Verdict(candidate=False, reason=reason)


def unchecked(reason: str) -> Verdict:
    return Verdict(candidate=None, reason=reason)


class Row(BaseModel):
    """One project, crate or source package: its newest release and what it could become."""

    registry: Registry
    name: str
    version: str | None = None
    source: str | None = Field(None, description="the SOURCE string build and refresh take")
    released: datetime | None = None
    language: str | None = None
    executable: str | None = Field(None, description="the one program it installs, if just one")
    seed: str = Field("", description="why this name was looked at")
    sections: list[str] = Field(
        default_factory=list,
        description="Debian sections of its program binaries (its own, or the package it was seeded from)",
    )
    debian_bytes: int | None = Field(None, description="size of that Debian source package's files")
    error: str | None = Field(None, description="the look-up failed: the row is no candidate")
    verdicts: dict[str, Verdict] = Field(default_factory=dict)

    def is_candidate(self, kind: str) -> bool:
        verdict = self.verdicts.get(kind)
        return self.error is None and verdict is not None and verdict.candidate is True

    @classmethod
    def failed(cls, registry: Registry, name: str, error: str, seed: str = "") -> Row:
        reason = f"look-up failed: {error}"
        return cls(
            registry=registry, name=name, seed=seed, error=error, verdicts={k: no(reason) for k in KINDS}
        )


class RegistryReport(BaseModel):
    registry: Registry
    rows: list[Row] = Field(default_factory=list)
    seeds: int = Field(0, description="names the walk took from its seed")
    requests: int = Field(0, description="HTTP requests made (cache hits not counted)")
    cached: int = Field(0, description="answers taken from the cache")
    seconds: float = 0.0
    stopped: str = Field("", description="why the walk ended: seeds exhausted, limit, request budget")


class Discovery(BaseModel):
    schema_version: int = 1
    since: date
    kind: str = "program"
    created_at: datetime
    registries: list[RegistryReport] = Field(default_factory=list)
    index_requests: int = Field(0, description="requests for the Debian index the seeds come from")

    def candidates(self) -> list[Row]:
        return [r for reg in self.registries for r in reg.rows if r.is_candidate(self.kind)]
