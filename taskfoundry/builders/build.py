"""run_build: the repository build image (`:task`), holding gold and coverage executables.

Layers: base -> toolchain (the recipe's packages) -> this build, each tagged by a hash
of its inputs and never rebuilt once it exists. Image layout: /src (the repository,
gold build done in it), /cov (a second copy, built with coverage), /deps (dependencies
fetched on the host), /task/gold/executable, /task/cov/executable, /task/recipe.json.
The inputs (context/: src, deps, scripts) go in as one loaded layer (`images.layer`),
then image/Dockerfile's one RUN builds; both and the log are kept in
`<workdir>/builds/<task id>/`.
"""

from __future__ import annotations

import json
import logging
import shlex
import shutil
from pathlib import Path

import docker
from pydantic import BaseModel, Field

from taskfoundry.builders.deps import prepare_deps
from taskfoundry.builders.detect_c import GOLD_BUILD
from taskfoundry.builders.recipe import Recipe
from taskfoundry.builders.static import SHIM_DIR, attempt, shim_files
from taskfoundry.builders.toolchain import ensure_toolchain
from taskfoundry.images.layer import inputs_image
from taskfoundry.images.run_layer import build_on_inputs
from taskfoundry.layout import COV_BUILD, COV_ROOT, COVERAGE, DEPS, GOLD, RUNTIME_TAR
from taskfoundry.naming import TaskNames
from taskfoundry.sources import Checkout

__all__ = ["COVERAGE", "COV_ROOT", "GOLD", "BuildResult", "build_script", "run_build"]
log = logging.getLogger(__name__)

#: rustc of the base image: locking picks crate versions it can build.
IMAGE_RUST = "1.96"
#: Printed to the build log between the gold and the coverage build.
GOLD_DONE = "== taskfoundry: gold build done, coverage build next"


class BuildResult(BaseModel):
    image: str
    built: bool
    recipe: Recipe
    log: Path
    build_sh: str
    toolchain: str = Field("", description="the image the build started from")
    toolchain_built: bool = False
    deps: list[str] = Field(default_factory=list, description="what the dependency step did")


def build_script(recipe: Recipe) -> str:
    """build.sh: the gold recipe, ending with `./executable` in the repository root."""
    lines = ["#!/bin/sh", "set -e", *recipe.build]
    if recipe.executable != "executable":
        lines.append(f"cp {shlex.quote(recipe.executable)} executable")
    return "\n".join(lines) + "\n"


# Refuse a gold program the cleanroom could not run: a native one must be an ELF file
# that needs no library from the build trees.
_CHECK = f"exe={GOLD}\n" + (
    """set -e
if [ "$1" = native ]; then
  head -c 4 "$exe" | grep -q ELF || { echo "taskfoundry: $exe is not a native (ELF) program" >&2; exit 1; }
  if ldd "$exe" 2>/dev/null | grep -E '=> (/src|/cov|/deps|not found)'; then
    echo "taskfoundry: $exe needs shared libraries of the build tree" >&2; exit 1
  fi
fi
"""
)


# Runtime data (figlet's fonts at its compiled-in /usr/local/share/figlet): the project's
# own install, staged with DESTDIR; what lands under share/ is copied where the gold looks
# for it and packed for the cleanroom. A failing install only means there is no data.
_STAGE = """st=/task/stage
case "$1" in
  make|autotools) make install DESTDIR=$st ;;
  cmake) DESTDIR=$st cmake --install %(b)s ;;
  meson) meson install -C %(b)s --no-rebuild --destdir $st ;;
esac >/task/stage.log 2>&1 || { echo "taskfoundry: no staged install (/task/stage.log)"; exit 0; }
dirs=""
for d in usr/local/share usr/share; do if [ -d "$st/$d" ]; then dirs="$dirs $d"; fi; done
if [ -n "$dirs" ]; then tar -C $st -cf %(tar)s $dirs && tar -C / -xf %(tar)s; fi
rm -rf $st
""" % {"b": GOLD_BUILD, "tar": RUNTIME_TAR}  # noqa: UP031 - shell braces again
STAGED_KINDS = {"make", "autotools", "cmake", "meson"}


def build_run(recipe: Recipe) -> str:
    """The one RUN over the inputs image (`images.layer.build_on_inputs`): the gold and the
    coverage build."""
    gold = shlex.quote(recipe.executable)
    cov = shlex.quote(recipe.coverage_executable)
    kind = "script" if recipe.source_visible else "native"
    staged = recipe.kind in STAGED_KINDS
    # cargo recipes link statically themselves (builders.static.cargo_lines); scripts have no linker
    static = recipe.kind != "cargo" and not recipe.source_visible
    return (
        f"cp -a /src {COV_ROOT} \\\n"
        f" && cd /src && sh -e /task/build.sh && install -D -m 0755 /src/{gold} {GOLD} \\\n"
        + (f" && {attempt(COV_ROOT, gold, GOLD)} && cd /src \\\n" if static else "")
        + (f" && sh /task/stage.sh {recipe.kind} \\\n" if staged else "")
        + f" && echo '{GOLD_DONE}' \\\n"
        f" && cd {COV_ROOT} && sh -e /task/build-cov.sh \\\n"
        f" && install -D -m 0755 {COV_ROOT}/{cov} {COVERAGE} \\\n"
        f" && sh /task/check.sh {kind} \\\n"
        # probes run as the worker user and write coverage data beside the objects
        f" && chmod -R a+rwX {COV_ROOT} && (test ! -d {COV_BUILD} || chmod -R a+rwX {COV_BUILD})"
    )


def _write_shims(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for path, text in shim_files().items():
        shim = where / Path(path).name
        shim.write_text(text)
        shim.chmod(0o755)
    return where


def run_build(
    checkout: Checkout,
    recipe: Recipe,
    base: str,
    names: TaskNames,
    client: docker.DockerClient,
) -> BuildResult:
    """Build the `:task` image; an image whose inputs are unchanged is reused as it is."""
    workdir = names.work_dir
    toolchain = ensure_toolchain(
        client, base, recipe.packages, workdir, names.namespace, optional=recipe.build_depends
    )
    builddir = names.build_dir
    context = builddir / "context"
    shutil.rmtree(context, ignore_errors=True)
    shutil.copytree(checkout.path, context / "src", symlinks=True, ignore=shutil.ignore_patterns(".git"))
    deps = prepare_deps(context / "src", recipe, context / "deps", workdir / "cache", IMAGE_RUST)
    for note in deps.notes:
        log.info("%s: %s", checkout.task_id, note)
    script = build_script(recipe)
    (context / "build.sh").write_text(script)
    (context / "build-cov.sh").write_text("\n".join(["set -e", *recipe.coverage_build]) + "\n")
    (context / "check.sh").write_text(_CHECK)
    if recipe.kind in STAGED_KINDS:
        (context / "stage.sh").write_text(_STAGE)
    (context / "recipe.json").write_text(json.dumps(recipe.model_dump(), sort_keys=True))
    scripts = ["build.sh", "build-cov.sh", "check.sh", "recipe.json"]
    scripts += ["stage.sh"] if recipe.kind in STAGED_KINDS else []
    entries = {"/src": context / "src", **{f"/task/{name}": context / name for name in scripts}}
    if (context / "deps").exists():
        entries[DEPS] = context / "deps"
    entries[SHIM_DIR] = _write_shims(context / "static-bin")
    inputs = inputs_image(client, toolchain.image, entries, deps.env, names.build_repo)
    image_dir = builddir / "image"
    tag, built = build_on_inputs(
        client, inputs, build_run(recipe), image_dir, names.build_repo, builddir / "build.log"
    )
    return BuildResult(
        image=tag,
        built=built,
        recipe=recipe,
        log=builddir / "build.log",
        build_sh=script,
        toolchain=toolchain.image,
        toolchain_built=toolchain.built,
        deps=deps.notes,
    )
