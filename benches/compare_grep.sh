#!/usr/bin/env bash
# classify vs `grep -E -c` on the same generated 100 MB log with the same signature patterns.
# Usage: benches/compare_grep.sh [MEGABYTES]   (best of 5 runs each, wall time in ms)
set -euo pipefail
cd "$(dirname "$0")/.."
mb="${1:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo build --release --quiet --example bench_log --bin sm120-doctor
./target/release/examples/bench_log "$work/bench.log" "$mb"
./target/release/examples/bench_log --ere > "$work/patterns.ere"
best() {
  local best_ms=""
  for _ in 1 2 3 4 5; do
    local t0 t1 ms
    # Not /dev/null: GNU grep stops at the first match when its output goes there.
    t0=$(date +%s%N); "$@" > "$work/out" || true; t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000000 ))
    if [ -z "$best_ms" ] || [ "$ms" -lt "$best_ms" ]; then best_ms=$ms; fi
  done
  echo "$best_ms"
}
grep_ms=$(best grep -E -c -f "$work/patterns.ere" "$work/bench.log")
ours_ms=$(best ./target/release/sm120-doctor classify --log "$work/bench.log" --format json)
echo "log: $(du -h "$work/bench.log" | cut -f1), patterns: $(wc -l < "$work/patterns.ere")"
echo "grep -E -c matching lines: $(grep -E -c -f "$work/patterns.ere" "$work/bench.log" || true)"
echo "sm120-doctor classify matches: $(./target/release/sm120-doctor classify --log "$work/bench.log" --format json | grep -c '"signature"' || true)"
echo "grep -E -c: ${grep_ms} ms"
echo "sm120-doctor classify: ${ours_ms} ms"
awk -v a="$ours_ms" -v b="$grep_ms" 'BEGIN { printf "ratio classify/grep: %.2f\n", a / b }'
