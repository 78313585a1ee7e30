"""Where things are in a build image (re-exported by `builders.build`)."""

GOLD = "/task/gold/executable"
COVERAGE = "/task/cov/executable"
COV_ROOT = "/cov"  # a second copy of the repository, built with coverage
COV_BUILD = "/cov-build"  # out-of-tree coverage builds (cmake, meson): not first-party
RUNTIME_TAR = "/task/runtime-data.tar"  # data the project's install puts under share/
DEPS = "/deps"  # dependencies fetched on the host (vendored crates, wheels)
