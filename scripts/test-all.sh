#!/usr/bin/env bash
# Every test: installs the interop peers (scripts/install-deps.sh), then
# runs the workspace tests (unit, property, golden omniORB vectors, real
# IDL), lints, and replays + briefly runs every fuzz target.
#   PEREGRINE_NO_FUZZ=1   skip the fuzz step (no nightly needed)
#   FUZZ_SECONDS=N        fresh fuzzing per target after the replay (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
# The fuzz crate is a workspace of its own.
(cd fuzz && cargo fmt --all -- --check)

echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo package (every publishable crate packs: versions, metadata, files inside the crate)"
cargo package --workspace --no-verify --locked --quiet

echo "== cargo doc (broken links and stray HTML in doc comments, generated code included)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

echo "== cargo test"
cargo test --workspace --locked

# Code size is deterministic for a toolchain, so its targets are checked
# on every run (the speed targets live in `ttcp`, run by hand).
echo "== code size (ttcp footprint, release build): ORB text and interpreted stubs within their targets"
cargo build --release --locked -q -p peregrine-ttcp
target/release/ttcp footprint --json - | python3 scripts/check-footprint.py

# The unsafe bulk copies of the CDR codec under Miri (undefined-behaviour
# checker). Miri is a rustup component; where it cannot be installed the
# step says so and is skipped.
if [ "${PEREGRINE_NO_MIRI:-0}" != 1 ]; then
  if rustup component add miri rust-src --toolchain nightly >/dev/null 2>&1; then
    echo "== miri: peregrine-cdr unsafe paths"
    # The value codec's cycle tests keep strong cycles (freed by the
    # application, as in the C++ mapping), which Miri reports as leaks:
    # they are left to the ordinary test run. Its unsafe code (`ValueRef`,
    # the chunks a reader makes values in) is checked on its own, a
    # decoded graph's release included.
    PROPTEST_CASES=4 MIRIFLAGS=-Zmiri-disable-isolation \
      cargo +nightly miri test -p peregrine-cdr --lib --test binstruct -- --skip value::
    MIRIFLAGS=-Zmiri-disable-isolation \
      cargo +nightly miri test -p peregrine-cdr --lib -- value::vref value::slot value::slab value::arena
    echo "== miri: peregrine-orb unsafe paths (POA Current frames, lent servants, operation names, inline keys, the leader's receive buffer, the coarse clock's fallback, the biased lock's mutex fallback)"
    MIRIFLAGS=-Zmiri-disable-isolation \
      cargo +nightly miri test -p peregrine-orb --lib -- \
      poa::current poa::lend op_str short_bytes leader_buf coarse_clock biased_lock
  else
    echo "== miri: component not installable here, skipped"
  fi
fi

if [ "${PEREGRINE_NO_FUZZ:-0}" != 1 ]; then
  echo "== fuzz: replay kept corpora, then ${FUZZ_SECONDS:-10}s of new inputs per target"
  passed=0
  # Values of types that report their edges (generated ones, and the
  # `value` target's) live in their message's arena and are freed with it,
  # cycles included: that target runs with leak detection. The other value
  # targets' hand-written types keep decoded cycles as strong references
  # (as in the C++ mapping), so they run without.
  leaks_for() { case $1 in dyn_value|abstract_value) echo -detect_leaks=0 ;; esac; }
  for t in $(cargo +nightly fuzz list --fuzz-dir fuzz); do
    # libFuzzer's flag covers the runs, ASAN_OPTIONS the check at exit.
    case $t in dyn_value|abstract_value) export ASAN_OPTIONS=detect_leaks=0 ;; *) unset ASAN_OPTIONS ;; esac
    cargo +nightly fuzz run --fuzz-dir fuzz -O "$t" "fuzz/corpus/$t" -- -runs=0 $(leaks_for "$t") >/dev/null 2>&1 \
      || { echo "fuzz replay failed: $t"; cargo +nightly fuzz run --fuzz-dir fuzz -O "$t" "fuzz/corpus/$t" -- -runs=0 $(leaks_for "$t") 2>&1 | tail -30; exit 1; }
    tmp=$(mktemp -d)
    cargo +nightly fuzz run --fuzz-dir fuzz -O "$t" "$tmp" "fuzz/corpus/$t" -- $(leaks_for "$t") \
      -max_total_time="${FUZZ_SECONDS:-10}" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 >"$tmp.log" 2>&1 \
      || { echo "fuzz failed: $t"; tail -40 "$tmp.log"; exit 1; }
    echo "fuzz $t: ok ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$tmp.log" | tail -1 || true))"
    rm -rf "$tmp" "$tmp.log"
    passed=$((passed + 1))
  done
  echo "fuzz: $passed passed, 0 failed"
fi
