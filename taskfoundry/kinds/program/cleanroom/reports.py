"""What the cleanroom stage reports: the test assets it kept or dropped, and the leak scan.

Models only (no scanning code), so the stage results that hold them do not tie every
stage to the scanners.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from taskfoundry.layout import WORKSPACE_EXECUTABLE
from taskfoundry.models import SCHEMA_VERSION, GoldIntegrity

ASSET_DIR = "assets"  # in the workspace

Reason = Literal[
    "binary",
    "project_format",
    "source",
    "script",
    "build_file",
    "artifact",
    "expected_output",
    "common_text",
    "plain_text",
    "parses_as_source",
    "too_large",
    "budget",
    "symlink",
]


class Asset(BaseModel):
    path: str = Field(description="relative to the repository root")
    reason: Reason
    size: int = 0
    sha256: str = ""

    @property
    def dest(self) -> str:
        """Relative to the workspace."""
        return f"{ASSET_DIR}/{self.path}"


class AssetReport(BaseModel):
    kept: list[Asset] = Field(default_factory=list)
    dropped: list[Asset] = Field(default_factory=list)

    def allowed(self, workspace: str) -> dict[str, str]:
        """Absolute path in the image -> sha256: the copies the leak scan must accept."""
        return {f"{workspace}/{a.dest}": a.sha256 for a in self.kept}


class LeakFinding(BaseModel):
    path: str
    kind: str
    evidence: str


class LeakReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    image: str
    verdict: Literal["clean", "leaky"]
    findings: list[LeakFinding]
    seconds: float = 0.0
    files_scanned: int = Field(0, description="files the in-container walk visited")
    texts_parsed: int = Field(0, description="text files parsed with tree-sitter on the host")
    source_checked: bool = Field(False, description="whether the original source was compared")
    notes: list[str] = Field(default_factory=list, description="limits the scan ran into")


Linkage = Literal["static", "dynamic", "script", "unknown"]


class AttackResult(BaseModel):
    result: Literal["blocked", "succeeded", "not_applicable"]
    detail: str = ""


class IntegrityReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    image: str
    gold: str = Field(WORKSPACE_EXECUTABLE, description="the executable attacked")
    linkage: Linkage = Field("unknown", description="static: no loader runs for the gold")
    verdict: GoldIntegrity
    attacks: dict[str, dict[str, AttackResult]] = Field(
        default_factory=dict, description="variant -> attack -> what it got"
    )
    seconds: float = 0.0

    def succeeded(self) -> list[str]:
        """`variant:attack` for every attack that got something."""
        return sorted(
            f"{variant}:{name}"
            for variant, results in self.attacks.items()
            for name, res in results.items()
            if res.result == "succeeded"
        )
