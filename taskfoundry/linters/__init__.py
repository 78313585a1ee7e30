"""The assertion linter (Table 8's 21 rules, one of ours) and the five-class triage, over libcst.

Use `lint_source` on one source text or `lint_paths` on files and directories; both return
a `LintResult` of findings, per-assertion triage and per-file errors. `RULES` maps each rule
id to its severity and checker. See docs/linter.md for what each rule means.
"""

from taskfoundry.linters.config import Allowance, LintConfig, load_config
from taskfoundry.linters.engine import lint_file, lint_paths, lint_source
from taskfoundry.linters.models import (
    AllowedFinding,
    AssertionTriage,
    Finding,
    LintError,
    LintResult,
)
from taskfoundry.linters.registry import RULES, Rule

__all__ = [
    "RULES",
    "Allowance",
    "AllowedFinding",
    "AssertionTriage",
    "Finding",
    "LintConfig",
    "LintError",
    "LintResult",
    "Rule",
    "lint_file",
    "lint_paths",
    "lint_source",
    "load_config",
]
