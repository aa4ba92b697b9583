#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60), seeded with the
# kept corpus (fuzz/corpus/<target>, which new finds are added to) and the
# omniORB golden fixtures, then minimizes the kept corpus.
# Needs nightly and cargo-fuzz: `cargo install cargo-fuzz`.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=${*:-"cdr_reader giop_message giop_fragments ior corbaloc idl_frontend typecode_any rx_frames fast_header conn_machine value dyn_value abstract_value"}
seeds_for() {
  case $1 in
    giop_message|giop_fragments|rx_frames) echo fixtures/omniorb/giop ;;
    cdr_reader) echo fixtures/omniorb/cdr ;;
    idl_frontend) echo crates/idl/tests/bad crates/idl/tests/good ;;
    *) ;;
  esac
}
# Decoded value cycles are strong references (leaked by design).
flags_for() {
  case $1 in
    value|dyn_value|abstract_value) echo -detect_leaks=0 ;;
    *) ;;
  esac
}
asan_for() {
  case $1 in
    value|dyn_value|abstract_value) echo detect_leaks=0 ;;
    *) echo "${ASAN_OPTIONS:-}" ;;
  esac
}
failed=()
for t in $targets; do
  mkdir -p "fuzz/corpus/$t"
  echo "== $t: ${secs}s"
  # shellcheck disable=SC2046
  ASAN_OPTIONS=$(asan_for "$t") cargo +nightly fuzz run -O "$t" "fuzz/corpus/$t" $(seeds_for "$t") -- \
    -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 $(flags_for "$t") 2>&1 \
    | grep -E "^(#|==|stat::number_of_executed_units|stat::peak_rss|INFO: (seed|-max_len))|ERROR|panicked|SUMMARY" | tail -8 \
    || failed+=("$t")
  cargo +nightly fuzz cmin -O "$t" "fuzz/corpus/$t" >/dev/null 2>&1 || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]} (crashes are in fuzz/artifacts/)"
  exit 1
fi
