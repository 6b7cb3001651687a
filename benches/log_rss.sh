#!/usr/bin/env bash
# Peak memory (max RSS) and output size of `classify`, `report` and `check` on big logs.
#
# Usage: benches/log_rss.sh [MEGABYTES] [RUNS]   (defaults: 512 MB, 3 runs)
# SM120_DOCTOR=PATH picks the binary (default: target/release/sm120-doctor, built if missing).
#
# Two logs are generated in a temporary directory: a crash loop (one line a knowledge-base
# signature matches, `Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'`,
# repeated to MEGABYTES) and a vLLM-style mixed log (start-up, throughput and access lines,
# one crash at the end). Each command runs RUNS times under /usr/bin/time -f '%M %e'; printed:
# max RSS in MiB and wall seconds, min / median / max, the exit status and the output's bytes.
# Issue 28's target: under 128 MiB RSS with bounded output for classify and report.
# `report` and `check` hold a log in memory and refuse one over 128 MiB (exit 2): the script
# says so rather than hiding it.
set -euo pipefail
cd "$(dirname "$0")/.."
mb="${1:-512}"
runs="${2:-3}"
bin="${SM120_DOCTOR:-target/release/sm120-doctor}"
if [[ ! -x "$bin" ]]; then
  cargo build --release --quiet --bin sm120-doctor
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$mb" <<'PY'
import sys
work, mb = sys.argv[1], int(sys.argv[2])
target = mb * 1024 * 1024
crash = b"(Worker_TP1 pid=2951) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\n"
mixed = "".join([
    "(EngineCore_DP0 pid=2817) INFO 12-03 08:00:01 [gpu_model_runner.py:2338] Starting to load model Qwen/Qwen3-8B...\n",
    "(Worker_TP0 pid=2951) INFO 12-03 08:00:41 [default_loader.py:267] Loading weights took 38.11 seconds\n",
    "(APIServer pid=2700) INFO 12-03 08:01:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.2 tokens/s, Running: 1 reqs\n",
    "(APIServer pid=2700) INFO:     127.0.0.1:53422 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
]).encode()
for name, block, tail in [("crashloop.log", crash * 1024, b""), ("mixed.log", mixed * 256, crash)]:
    with open(f"{work}/{name}", "wb") as f:
        n = 0
        while n + len(block) <= target:
            f.write(block)
            n += len(block)
        f.write(tail)
PY

# min / median / max of the numbers on stdin
stats() { sort -g | awk '{a[NR]=$1} END {printf "%s / %s / %s", a[1], a[int((NR+1)/2)], a[NR]}'; }

printf '| log | command | max RSS MiB | wall s | exit | output bytes |\n|---|---|---|---|---|---|\n'
for log in crashloop mixed; do
  f="$work/$log.log"
  for mode in "classify --format json" "report --format json" "check --demo --format json"; do
    : > "$work/rss"; : > "$work/wall"
    rc=0
    for _ in $(seq "$runs"); do
      rc=0
      # shellcheck disable=SC2086
      /usr/bin/time -o "$work/t" -f '%M %e' "$bin" $mode --log "$f" > "$work/out" 2> "$work/err" || rc=$?
      read -r kb secs < <(tail -n 1 "$work/t")
      awk -v k="$kb" 'BEGIN {printf "%.1f\n", k / 1024}' >> "$work/rss"
      echo "$secs" >> "$work/wall"
    done
    printf '| %s (%s MiB) | `%s` | %s | %s | %s | %s |\n' "$log" "$mb" "${mode%% *}" \
      "$(stats < "$work/rss")" "$(stats < "$work/wall")" "$rc" "$(stat -c %s "$work/out")"
    if [[ $rc -eq 2 ]]; then
      echo "  (${mode%% *} refused it: $(head -c 200 "$work/err"))"
    fi
  done
done
