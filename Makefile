# docbench: `make demo` runs the main job on this machine's engines; `make test` runs the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
RUN_STAMP := $(VENV)/.runtime-stamp
SCALE  ?= 1m

.PHONY: install native wheel test test-quick test-systems demo bench-generate bench-load lint clean systems

# A virtualenv with docbench and its libraries (chDB, DuckDB, SQLite/JSONB, psycopg...), plus the
# native generator. Re-runs only when pyproject.toml or the generator's sources change.
install: $(STAMP) native

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUN_STAMP)

# What `make demo` needs: docbench and its libraries, without the test and lint tools.
$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e .
	touch $(RUN_STAMP)

native:
	bash scripts/build-native.sh

# A wheel that carries the three native programs (py3-none-<platform>): `pip install` of it needs
# no Rust toolchain. Built into $(WHEEL_DIR).
WHEEL_DIR ?= dist
wheel: $(STAMP)
	rm -rf src/docbench/native_bin build
	bash scripts/build-native.sh src/docbench/native_bin
	$(BIN)/pip wheel --quiet --no-deps --no-build-isolation --wheel-dir $(WHEEL_DIR) .
	rm -rf src/docbench/native_bin build
	ls $(WHEEL_DIR)/docbench-*.whl

# Every system's server, installed idempotently (Debian packages, Maven Central, the Go proxy,
# PyPI). A system the machine cannot run for a reason docbench cannot install around
# (elasticsearch9 without a full JDK 21+: Debian 12 has none) is reported and its tests skip.
test-systems: install
	$(BIN)/docbench setup all
	bash scripts/install-chromium.sh

# The tests against the real engines, in three pytest-xdist workers on the two cores (much of
# the suite waits on servers; a test module stays on one worker: its fixtures start once); the
# 25 slowest are listed at the end of every run (CI's budget: see docs/ARCHITECTURE.md,
# "Tests"). TEST_WORKERS=0 runs them in one process.
# The Rust crate's test programs are built before the tests start (a fresh clone compiles them
# for about a minute): tests/test_native_crate.py then times the crate's tests, not a build.
TEST_WORKERS ?= 3
test: install test-systems lint
	PATH="$${CARGO_HOME:-$$HOME/.cargo}/bin:$$PATH" cargo test --release --locked --quiet --no-run \
	  --manifest-path native/docbench-gen/Cargo.toml
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25

# The inner loop: the tests that need no server and are not among the slowest (under a minute).
test-quick: install
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m quick

# One run per system (its out-of-the-box variant: `--default-variants`) of the local systems at 1m.
demo: $(RUN_STAMP) native
	-$(BIN)/docbench setup postgresql
	$(BIN)/docbench run --scale $(SCALE) --default-variants

systems: install
	$(BIN)/docbench systems

bench-generate: install
	$(BIN)/docbench bench generate --docs $(SCALE)

bench-load: install
	$(BIN)/docbench bench load --scale $(SCALE)

# What pre-commit runs (.pre-commit-config.yaml): lint, formatting, layers, types, Rust.
lint: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/lint-imports
	$(BIN)/mypy
	bash scripts/check-native.sh

clean:
	rm -rf .docbench results
