# Two entry points do all set-up on a fresh machine: `make demo` and `make test`.
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
OUT    ?= out
EXAMPLE ?= examples/csvq

.PHONY: demo test lint unit base host-deps browser-deps clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# debootstrap makes the base image locally (no registry to pull from here)
host-deps:
	@command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }

# headless Chromium for the dashboard test (tests/test_catalog_browser.py), from Debian's archive
browser-deps:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }

# built once per machine, reused by tag (a hash of its recipe)
base: $(STAMP) host-deps
	$(BIN)/taskfoundry base

demo: base
	$(BIN)/taskfoundry build $(EXAMPLE) --out $(OUT)

lint: $(STAMP)
	$(BIN)/ruff check taskfoundry tests benchmarks
	$(BIN)/ruff format --check taskfoundry tests benchmarks
	$(BIN)/mypy

# three xdist workers (a third keeps both cores busy while the others wait on timeouts and
# heartbeats: 26.7 -> 24.4 minutes), each test module whole on one (tests/conftest.py:
# module_group); the 40 slowest tests close the log, a profile of every run
PYTEST_WORKERS ?= 3

test: base lint browser-deps
	$(BIN)/pytest tests -n $(PYTEST_WORKERS) --dist loadfile --durations=40

unit: $(STAMP)
	$(BIN)/pytest tests -m "not docker"

clean:
	rm -rf $(OUT) .pytest_cache .mypy_cache .ruff_cache
