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
# Best of 5 runs: wall ms and CPU (user+sys) ms. CPU time is the fairer number on a busy machine.
best() {
  local best_wall="" best_cpu=""
  for _ in 1 2 3 4 5; do
    # Not /dev/null: GNU grep stops at the first match when its output goes there.
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" > "$work/out" || true
    # GNU time writes "Command exited with non-zero status" first when the exit code is not 0.
    read -r wall user sys < <(tail -n 1 "$work/time")
    local w c
    w=$(awk -v x="$wall" 'BEGIN { printf "%d", x * 1000 }')
    c=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%d", (u + s) * 1000 }')
    if [ -z "$best_wall" ] || [ "$w" -lt "$best_wall" ]; then best_wall=$w; fi
    if [ -z "$best_cpu" ] || [ "$c" -lt "$best_cpu" ]; then best_cpu=$c; fi
  done
  echo "$best_wall $best_cpu"
}
read -r grep_wall grep_cpu <<< "$(best grep -E -c -f "$work/patterns.ere" "$work/bench.log")"
read -r ours_wall ours_cpu <<< "$(best ./target/release/sm120-doctor classify --log "$work/bench.log" --format json)"
echo "log: $(du -h "$work/bench.log" | cut -f1), patterns: $(wc -l < "$work/patterns.ere")"
echo "grep -E -c matching lines: $(grep -E -c -f "$work/patterns.ere" "$work/bench.log" || true)"
echo "sm120-doctor classify matches: $(./target/release/sm120-doctor classify --log "$work/bench.log" --format json | grep -c '"signature"' || true)"
echo "grep -E -c:            wall ${grep_wall} ms, cpu ${grep_cpu} ms"
echo "sm120-doctor classify: wall ${ours_wall} ms, cpu ${ours_cpu} ms"
awk -v a="$ours_wall" -v b="$grep_wall" -v c="$ours_cpu" -v d="$grep_cpu" \
  'BEGIN { printf "ratio classify/grep: wall %.2f, cpu %.2f\n", a / b, c / d }'
