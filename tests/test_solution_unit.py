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
