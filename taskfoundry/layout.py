"""Where things are in a build image (re-exported by `builders.build`), and the one path the
worker's images share with it: the workspace."""

WORKSPACE = "/workspace"  # the worker's directory in the cleanroom and the eval stage
WORKSPACE_EXECUTABLE = f"{WORKSPACE}/executable"
# The gold again, where the worker cannot delete or replace it (a root-owned directory):
# `./executable` is the worker's only oracle and agents overwrite it (ProgramBench#60). Hidden
# from every grading container (a tmpfs over it; a whiteout in the root alias).
REFERENCE_DIR = "/reference"
REFERENCE_EXECUTABLE = f"{REFERENCE_DIR}/executable"

GOLD = "/task/gold/executable"
COVERAGE = "/task/cov/executable"
COV_ROOT = "/cov"  # a second copy of the repository, built with coverage
COV_BUILD = "/cov-build"  # out-of-tree coverage builds (cmake, meson): not first-party
RUNTIME_TAR = "/task/runtime-data.tar"  # data the project's install puts under share/
MANUAL_DIRS = frozenset({"man", "info", "doc"})  # in that data: manuals, not needed to run
DEPS = "/deps"  # dependencies fetched on the host (vendored crates, wheels)
