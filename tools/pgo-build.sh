#!/usr/bin/env bash
# Builds the native module (python/atmsim/_atmsim*.so) with profile-guided optimisation
# (docs/performance.md, "Profile-guided build"): an instrumented build, a training run,
# then the optimised build from the profile the training wrote. Called by `make build`.
#
# Training set: `atmsim bench --quick` (the kernel loops, the hand-written reference
# loops and SimPy, the paper-scenario rows) and every shipped scenario under
# scenarios/ run for 100 simulated ms (no warm-up). The references are trained like atmsim
# itself, so that a side-by-side ratio compares two loops built the same way.
#
# Without llvm-profdata for the active Rust toolchain (`rustup component add
# llvm-tools`, tried once here) or with PGO=0, it builds without a profile, as before,
# and says so on one line.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
export VIRTUAL_ENV=$PWD/$VENV PATH=$PWD/$VENV/bin:$PATH PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# Separate target directories: RUSTFLAGS differ from `cargo test`'s, and sharing
# target/ would rebuild every crate each time one or the other runs.
GEN_DIR=$PWD/target/pgo-gen
USE_DIR=$PWD/target/pgo-use
PROFILE=$PWD/target/pgo.profdata

plain() {
    echo "pgo-build: $1; building without a profile" >&2
    CARGO_TARGET_DIR=$USE_DIR maturin develop --release --quiet
    exit 0
}

[ "${PGO:-1}" = 0 ] && plain "PGO=0"

profdata() {
    local p
    p="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"
    [ -x "$p" ] && echo "$p"
}
PROFDATA=$(profdata || true)
if [ -z "$PROFDATA" ] && command -v rustup >/dev/null 2>&1; then
    echo "pgo-build: installing the toolchain's llvm-tools (llvm-profdata)" >&2
    timeout 300 rustup component add llvm-tools >/dev/null 2>&1 || true
    PROFDATA=$(profdata || true)
fi
[ -n "$PROFDATA" ] || plain "no llvm-profdata for this toolchain (rustup component add llvm-tools)"

RAW=$GEN_DIR/profraw
rm -rf "$RAW" "$PROFILE"
mkdir -p "$RAW"
echo "pgo-build: 1/3 instrumented build" >&2
RUSTFLAGS="-Cprofile-generate=$RAW" CARGO_TARGET_DIR=$GEN_DIR maturin develop --release --quiet

echo "pgo-build: 2/3 training (atmsim bench --quick; every shipped scenario, 100 ms)" >&2
export LLVM_PROFILE_FILE=$RAW/%m_%p.profraw
atmsim bench --quick >/dev/null || echo "pgo-build: warning: atmsim bench --quick failed; training goes on without it" >&2
find scenarios -name '*.toml' | sort | while read -r f; do
    # A file that is not a runnable scenario on its own (a sweep's parts) fails fast;
    # training takes what ran.
    (cd "$(dirname "$f")" && timeout 60 atmsim run -q "$(basename "$f")" --set scenario.warmup='0 s' --set scenario.duration='100 ms' >/dev/null 2>&1) || true
done
unset LLVM_PROFILE_FILE
"$PROFDATA" merge -o "$PROFILE" "$RAW"

echo "pgo-build: 3/3 optimised build (profile $PROFILE)" >&2
RUSTFLAGS="-Cprofile-use=$PROFILE -Cllvm-args=-pgo-warn-missing-function=false" ATMSIM_BUILD_PROFILE=pgo \
    CARGO_TARGET_DIR=$USE_DIR maturin develop --release --quiet
