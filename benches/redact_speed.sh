#!/usr/bin/env bash
# `classify --redact` against `classify`, side by side, on a vLLM-style log made by
# examples/bench_log.rs (the log compare_grep.sh uses).
#
# Usage: benches/redact_speed.sh [MEGABYTES] [RUNS]   (defaults: 64 MB, 3 runs)
# SM120_DOCTOR=PATH picks the binary (default: target/release/sm120-doctor, built if missing).
#
# The two commands run in turn (A B A B ...), `--format json`, output to /dev/null; printed:
# wall and CPU (user + sys) seconds of each, min / median / max, and the ratio redact / plain
# of each round, min / median / max.
set -euo pipefail
cd "$(dirname "$0")/.."
mb="${1:-64}"
runs="${2:-3}"
bin="${SM120_DOCTOR:-target/release/sm120-doctor}"
if [[ ! -x "$bin" ]]; then
  cargo build --release --quiet --bin sm120-doctor
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo run --release --quiet --example bench_log -- "$work/vllm.log" "$mb"

stats() { sort -g | awk '{a[NR]=$1} END {printf "%s / %s / %s", a[1], a[int((NR+1)/2)], a[NR]}'; }
: > "$work/plain"; : > "$work/redact"; : > "$work/ratio"; : > "$work/plain_cpu"; : > "$work/redact_cpu"
for _ in $(seq "$runs"); do
  /usr/bin/time -o "$work/t1" -f '%e %U %S' "$bin" classify --format json --log "$work/vllm.log" > /dev/null || true
  /usr/bin/time -o "$work/t2" -f '%e %U %S' "$bin" classify --redact --format json --log "$work/vllm.log" > /dev/null || true
  read -r w1 u1 s1 < <(tail -n 1 "$work/t1")
  read -r w2 u2 s2 < <(tail -n 1 "$work/t2")
  echo "$w1" >> "$work/plain"; echo "$w2" >> "$work/redact"
  awk -v a="$u1" -v b="$s1" 'BEGIN {print a + b}' >> "$work/plain_cpu"
  awk -v a="$u2" -v b="$s2" 'BEGIN {print a + b}' >> "$work/redact_cpu"
  awk -v a="$w1" -v b="$w2" 'BEGIN {printf "%.2f\n", b / a}' >> "$work/ratio"
done
echo "log: $(stat -c %s "$work/vllm.log") bytes, $runs runs each, min / median / max"
echo "classify wall s:          $(stats < "$work/plain")   CPU s: $(stats < "$work/plain_cpu")"
echo "classify --redact wall s: $(stats < "$work/redact")   CPU s: $(stats < "$work/redact_cpu")"
echo "ratio redact / plain (wall, per round): $(stats < "$work/ratio")"
