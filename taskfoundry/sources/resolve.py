"""resolve_source: pick the provider for a SOURCE string and fetch a pinned checkout.

    ./path, /abs/path              a git work tree or a directory in one (committed files)
    https://..., file://..., a@b:c a git URL, optionally `URL#ref`
    debian:PKG[=VERSION]           the upstream tarball of a Debian source package
    crate:NAME[@VERSION]           a crate from the Rust crate registry
    pypi:NAME[==VERSION]           a PyPI sdist

Registry providers are a name -> "module:function" table, imported when used.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from taskfoundry.dotted import load
from taskfoundry.errors import SourceError
from taskfoundry.sources import git, local
from taskfoundry.sources.checkout import Checkout
from taskfoundry.sources.registry import SourceConfig

#: SOURCE prefix -> provider function `fetch(spec, workdir, config) -> Checkout`.
PROVIDERS: dict[str, str] = {
    "debian": "taskfoundry.sources.debian:fetch",
    "crate": "taskfoundry.sources.crates:fetch",
    "pypi": "taskfoundry.sources.pypi:fetch",
}
_PREFIX = re.compile(r"^(?P<prefix>[a-z][a-z0-9]*):(?!//)(?P<spec>.+)$")


#: SOURCE prefix -> `check(spec, config)`: what a source stage would refuse, told without a download.
CHECKS: dict[str, str] = {prefix: target.replace(":fetch", ":check") for prefix, target in PROVIDERS.items()}


class RegistryProvider(Protocol):
    def __call__(self, spec: str, workdir: Path, config: SourceConfig) -> Checkout: ...


def resolve_source(source: str, workdir: Path, config: SourceConfig | None = None) -> Checkout:
    """Fetch `source` under `workdir` as a checkout pinned to a commit."""
    if git.URL.match(source):
        return git.fetch(source, workdir)
    if match := _registry(source):
        return provider(match["prefix"])(match["spec"], workdir, config or SourceConfig())
    return local.fetch(source, workdir)


def check_source(source: str, config: SourceConfig | None = None) -> None:
    """Refuse at once what the source stage would refuse (a path that is no committed folder, a
    source of no known type or form, a package its registry lacks), before a server starts or
    a flow runs; a git URL's remote is left to the stage."""
    if git.URL.match(source):
        return
    if match := _registry(source):
        provider(match["prefix"])  # an unknown prefix lists the known ones
        load(CHECKS[match["prefix"]])(match["spec"], config or SourceConfig())
        return
    local.check(source)


def _registry(source: str) -> re.Match[str] | None:
    """`prefix:spec` naming a registry source; a local path that looks like one is a path."""
    match = _PREFIX.match(source)
    return match if match and not Path(source).exists() else None


def provider(prefix: str) -> RegistryProvider:
    """The registry provider for `prefix`; an unknown prefix lists the known ones."""
    if prefix not in PROVIDERS:
        known = ", ".join(f"{p}:" for p in sorted(PROVIDERS))
        raise SourceError(f"unknown source type {prefix!r}: use a path, a git URL, or one of {known}")
    fetch: RegistryProvider = load(PROVIDERS[prefix])
    return fetch
