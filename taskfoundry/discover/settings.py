"""`discover` settings: bounds, cache, and the seeds the registries cannot list themselves."""

from __future__ import annotations

from pydantic import BaseModel, Field

REGISTRIES = ("pypi", "crates", "debian")


class DiscoverConfig(BaseModel):
    """How `taskfoundry discover` (and `refresh` with no catalog) looks for new sources.

    The registry URLs are those of `sources` (the providers that fetch what is found), so a
    mirror or a test's loopback fake is set in one place.
    """

    model_config = {"extra": "forbid"}

    registries: list[str] = Field(default_factory=lambda: list(REGISTRIES), description="registries asked")
    limit: int = Field(25, ge=0, description="stop a registry after this many candidates of the kind")
    max_requests: int = Field(
        150, ge=0, description="HTTP requests per registry per run (cache hits are free)"
    )
    timeout: float = Field(20.0, gt=0, description="seconds per HTTP request")
    ttl_hours: float = Field(24.0, ge=0, description="a cached answer younger than this is reused")
    window_days: int = Field(
        30, ge=1, description="refresh with no catalog and no earlier refresh: discover this many days back"
    )
    debian_baseline: str | None = Field(
        None,
        description="a suite to compare `sources.debian.suite` with (testing, for unstable): sources "
        "whose version it lacks are recent uploads, walked first by every registry's seed",
    )
    seeds: dict[str, list[str]] = Field(
        default_factory=dict,
        description="names checked first, per registry (pypi: project, crates: crate, debian: source)",
    )
