"""`taskfoundry lint` on third-party unit-test suites: how many HIGH findings, by rule, each listed
for a reviewer to judge (issue 59: at most 1 in 20 a careful reviewer would reject).

    .venv/bin/python benchmarks/lint_unit_suites.py [attrs==26.1.0 packaging==26.4 pluggy==1.7.0 ...]

Each PROJECT==VERSION's sdist comes from PyPI (pip download, no wheel: the tests ship in the
sdist), and its test folder (tests/ or testing/) is linted as `taskfoundry lint` does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

from taskfoundry.linters import LintConfig
from taskfoundry.linters.engine import lint_paths

DEFAULT = ["attrs==26.1.0", "packaging==26.4", "pluggy==1.7.0"]
TEST_FOLDERS = ("tests", "testing", "test")


def _suite(spec: str, root: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            ":all:",
            "-d",
            str(root),
            spec,
        ],
        check=True,
    )
    name = spec.split("==")[0].replace("-", "_").lower()
    (archive,) = [p for p in root.glob("*.tar.gz") if p.name.lower().replace("-", "_").startswith(name)]
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")
    unpacked = root / archive.name.removesuffix(".tar.gz")
    return next(unpacked / f for f in TEST_FOLDERS if (unpacked / f).is_dir())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("specs", nargs="*", default=DEFAULT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs:
            root = Path(tmp) / spec
            root.mkdir()
            folder = _suite(spec, root)
            result = lint_paths([folder], LintConfig())
            high = [f for f in result.findings if f.severity == "HIGH"]
            rules = Counter(f.rule for f in high).most_common()
            print(f"## {spec}: {len(result.tests)} tests {dict(result.suites)}, HIGH {len(high)} {rules}")
            for f in high:
                line = Path(f.path).read_text().splitlines()[f.line - 1].strip()
                print(
                    f"- {Path(f.path).relative_to(folder)}::{f.test} {f.rule} (line {f.line}): `{line[:90]}`"
                )


if __name__ == "__main__":
    main()
