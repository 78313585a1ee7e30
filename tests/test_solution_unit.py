"""compile.sh of the reference solution, made from build.sh (no Docker)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from taskfoundry.kinds.program.solution import DEPS_DIR, compile_script, solution_tarball
from taskfoundry.layout import DEPS


def test_compile_script_moves_deps_and_marks_its_build() -> None:
    script = compile_script(
        f"#!/bin/sh\nset -e\ncargo build --offline\ncp {DEPS}/x executable\n",
        {"CARGO_HOME": f"{DEPS}/cargo", "PATH": "/usr/bin"},
    )
    assert DEPS + "/" not in script.replace(f"s#{DEPS}#", "")
    assert 'export CARGO_HOME="$TF_DEPS/cargo"' in script and "PATH=" not in script
    assert "cp $TF_DEPS/x executable" in script
    # a reproducible build would equal the gold byte for byte: the reference marks its own
    assert script.rstrip().endswith(">> ./executable")


def test_solution_tarball_has_the_tree_deps_and_compile_sh(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.c").write_text("int main(void){return 0;}\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    deps = io.BytesIO()
    with tarfile.open(fileobj=deps, mode="w") as tar:
        info = tarfile.TarInfo("./cargo/config.toml")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"x\n"))
    data = solution_tarball(tmp_path, "#!/bin/sh\n", deps.getvalue())
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = set(tar.getnames())
        assert tar.getmember("compile.sh").mode == 0o755
    assert {"src/main.c", "compile.sh", f"{DEPS_DIR}/cargo/config.toml"} <= names
    assert not any(n.startswith(".git") for n in names)


def test_a_dependency_with_a_long_name_lands_under_the_deps_folder(tmp_path: Path) -> None:
    """dirsearch: Docker's archive names a 113-character wheel in a PAX header, and tarfile lets
    a PAX `path` outrank the member's name: the copy kept `./wheels/charset_normalizer-…`, and
    the reference's offline pip install found no charset_normalizer (graded 0.0)."""
    wheel = (
        "./wheels/charset_normalizer-3.5.3-cp313-cp313-"
        "manylinux1_x86_64.manylinux_2_28_x86_64.manylinux_2_5_x86_64.whl"
    )
    deps = io.BytesIO()
    with tarfile.open(fileobj=deps, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in (wheel, "./wheels/short.whl"):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"PK"))
    data = solution_tarball(tmp_path, "#!/bin/sh\n", deps.getvalue())
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = set(tar.getnames())
    assert {f"{DEPS_DIR}/{wheel[2:]}", f"{DEPS_DIR}/wheels/short.whl"} <= names, names
    assert not any(n.startswith(("./", "wheels/")) for n in names), names
