"""Prompts: `string.Template` texts, filled in; the package data that holds a caller's templates."""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import resources
from string import Template

from taskfoundry.errors import ConfigError


def load_template(package: str, name: str) -> str:
    """The template file `templates/<name>` of `package` (its package data)."""
    found = resources.files(package).joinpath("templates", name)
    if not found.is_file():
        raise ConfigError(f"no prompt template {name!r} in {package}")
    return found.read_text(encoding="utf-8")


def render(template: str, variables: Mapping[str, str], what: str = "prompt") -> str:
    """`template` with `$variables` filled in; an unknown variable is a config error."""
    try:
        text = Template(template).substitute(variables)
    except (KeyError, ValueError) as exc:
        raise ConfigError(f"{what} template: bad or unknown variable {exc}") from exc
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"  # empty variables leave no gaps
