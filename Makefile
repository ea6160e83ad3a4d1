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

.PHONY: all venv build browser test bless run bench validate validate-quick check-tools clean FORCE

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

# Rebuild also when the native module has disappeared from python/atmsim/.
NATIVE_MISSING := $(if $(wildcard python/atmsim/_atmsim*.so),,FORCE)

# The native module is built with profile-guided optimisation (tools/pgo-build.sh:
# instrumented build, training, optimised build; docs/performance.md, "Profile-guided
# build"). `PGO=0 make build` builds it without a profile (quicker while editing).
PGO ?= 1
build: .stamp-build
.stamp-build: .stamp-venv $(RUST_SOURCES) tools/pgo-build.sh $(NATIVE_MISSING) | check-tools
	PGO=$(PGO) VENV=$(VENV) tools/pgo-build.sh
	@touch $@

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

test: check-tools build browser
	cargo test --workspace --exclude atmsim-py --release
	$(VPY) -m pytest -q -W error tests/
	$(ATMSIM) validate --quick

# Rewrites the golden fingerprints of every shipped scenario (tests/it/golden.rs).
# Commit the result on its own, with a message that says why the traces changed.
bless: check-tools
	ATMSIM_BLESS=1 cargo test --release -p atmsim-scenario --test it golden

run: build
	$(ATMSIM) reproduce all --quick --out out/

bench: build
	$(ATMSIM) bench

validate: build
	$(ATMSIM) validate

validate-quick: build
	$(ATMSIM) validate --quick

clean:
	rm -rf $(VENV) .stamp-venv .stamp-build .pytest_cache
