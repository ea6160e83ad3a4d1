# atmsim — one entry point for setting up, building, testing and running.
# Needs only python3 (>= 3.10) and cargo on PATH; everything else lands in .venv.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
ATMSIM := $(VENV)/bin/atmsim

# Anything that changes the native module forces a rebuild. Python sources under
# python/ are NOT listed: `maturin develop` installs them as a path (.pth) into
# the venv, so edits are visible without rebuilding.
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name 'Cargo.toml' 2>/dev/null) \
                Cargo.toml $(wildcard Cargo.lock) pyproject.toml

.PHONY: all venv build build-test browser test bless run bench validate validate-quick check-tools clean FORCE

FORCE:

all: test

check-tools:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; install Python >= 3.10" >&2; exit 1; }
	@command -v cargo >/dev/null 2>&1 || { echo "error: cargo not found; install Rust with rustup (https://rustup.rs) and make sure ~/.cargo/bin is on PATH" >&2; exit 1; }

venv: .stamp-venv
.stamp-venv: requirements.lock
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; install Python >= 3.10" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	@touch $@

# The native module python/atmsim/ imports. Two builds of it are kept, each copied
# there by the target that needs it (a copy, so switching between them rebuilds nothing):
#  - `make build` (run, bench, validate): profile-guided optimisation (tools/pgo-build.sh:
#    instrumented build, training, optimised build; docs/performance.md, "Profile-guided
#    build"), about 4 minutes; `PGO=0 make build` builds it without a profile.
#  - `make build-test` (test): the `test-build` profile of Cargo.toml (optimised, no fat
#    LTO, no profile), in target/ beside `cargo test`'s own build, which shares its
#    crates; tests check behaviour and results, which are the same in both builds
#    (the golden fingerprints pin them), not speed.
NATIVE   := python/atmsim/_atmsim.abi3.so
PGO_SO   := target/pgo-use/atmsim-native.so
TEST_SO  := target/test-build/atmsim-native.so
PGO ?= 1

$(PGO_SO): .stamp-venv $(RUST_SOURCES) tools/pgo-build.sh | check-tools
	PGO=$(PGO) VENV=$(VENV) tools/pgo-build.sh
	@mkdir -p $(dir $@) && cp $(NATIVE) $@

$(TEST_SO): .stamp-venv $(RUST_SOURCES) | check-tools
	VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(VENV)/bin:$$PATH maturin develop --profile test-build --quiet
	@mkdir -p $(dir $@) && cp $(NATIVE) $@

build: $(PGO_SO)
	@cmp -s $(PGO_SO) $(NATIVE) || cp $(PGO_SO) $(NATIVE)

build-test: $(TEST_SO)
	@cmp -s $(TEST_SO) $(NATIVE) || cp $(TEST_SO) $(NATIVE)

# Headless Chromium for the report's browser test (tests/test_report_browser.py):
# Debian's package, installed only when missing (needs root and apt-get).
CHROMIUM := /usr/bin/chromium
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if ! command -v apt-get >/dev/null 2>&1; then \
	    echo "error: $(CHROMIUM) is missing and apt-get is unavailable; install Chromium so that $(CHROMIUM) exists (Debian: apt-get install chromium)" >&2; exit 1; \
	  fi; \
	  echo "installing chromium (apt-get) for the report browser test"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
	    || { echo "error: apt-get install chromium failed (are you root?); install it so that $(CHROMIUM) exists" >&2; exit 1; }; \
	fi

# Both cores: pytest-xdist keeps each test file on one worker (its module fixtures are
# built once); the workers share the session's `reproduce all --quick` store, which
# the controller starts in the background at once (tests/conftest.py, quick_store). `atmsim validate --quick` runs inside pytest
# (tests/test_validate_bench.py, which also checks every case's verdict).
test: check-tools build-test browser
	cargo test --workspace --exclude atmsim-py --profile test-build
	ATMSIM_TEST_PRESTART=1 $(VPY) -m pytest -q -W error -n 2 --dist loadfile tests/

# Rewrites the golden fingerprints of every shipped scenario (tests/it/golden.rs).
# Commit the result on its own, with a message that says why the traces changed.
bless: check-tools
	ATMSIM_BLESS=1 cargo test --profile test-build -p atmsim-scenario --test it golden

run: build
	$(ATMSIM) reproduce all --quick --out out/

bench: build
	$(ATMSIM) bench

validate: build
	$(ATMSIM) validate

validate-quick: build
	$(ATMSIM) validate --quick

clean:
	rm -rf $(VENV) .stamp-venv .stamp-build .pytest_cache $(PGO_SO) $(TEST_SO) $(NATIVE)
