#!/usr/bin/env bash
# classify vs `grep -E -c` on the same generated log with the same signature patterns.
#
# Usage: benches/compare_grep.sh [MEGABYTES] [MAX_RATIO]   (defaults: 100 MB, 1.5)
#
# Both run on the file the way a user runs them: `sm120-doctor classify --log FILE --format json`
# is the streamed path (blocks through Scanner::scan_reader, normalisation, wrapped-line joins,
# ranking). Best of 5 runs each, wall and CPU (user+sys) time in ms.
#
# Fails (non-zero exit) when a run fails (grep: exit 0 or 1 = no match; classify: exit 0 or 1 =
# findings), when the two disagree on the number of matching lines, or when classify's CPU time
# is above MAX_RATIO times grep's. On this generated log no signature is set aside by context
# rules and no match spans a wrapped line, so every line grep counts is a line classify reports,
# and the other way round.
set -euo pipefail
cd "$(dirname "$0")/.."
mb="${1:-100}"
max_ratio="${2:-1.5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo build --release --quiet --example bench_log --bin sm120-doctor
./target/release/examples/bench_log "$work/bench.log" "$mb"
./target/release/examples/bench_log --ere > "$work/patterns.ere"

# Run "$@" with stdout to $work/out; fail unless the exit status is 0 or 1.
run_ok() {
  local rc=0
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" > "$work/out" || rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "FAILED (exit $rc): $*" >&2
    cat "$work/out" >&2 || true
    exit 1
  fi
}

# Best of 5 runs: wall ms and CPU (user+sys) ms. CPU time is the fairer number on a busy machine.
best() {
  local best_wall="" best_cpu=""
  for _ in 1 2 3 4 5; do
    # Not /dev/null: GNU grep stops at the first match when its output goes there.
    run_ok "$@"
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
grep_lines=$(cat "$work/out")
read -r ours_wall ours_cpu <<< "$(best ./target/release/sm120-doctor classify --log "$work/bench.log" --format json)"
# Distinct matching lines in classify's JSON `matches` (one file, so the line number is the
# key; the `run` part names lines too, which grep's patterns do not count).
ours_lines=$(python3 -c 'import json, sys; print(len({m["line"] for m in json.load(open(sys.argv[1]))["matches"]}))' "$work/out")

echo "log: $(du -h "$work/bench.log" | cut -f1), patterns: $(wc -l < "$work/patterns.ere")"
echo "grep -E -c matching lines:            $grep_lines"
echo "sm120-doctor classify matching lines: $ours_lines"
echo "grep -E -c:            wall ${grep_wall} ms, cpu ${grep_cpu} ms"
echo "sm120-doctor classify: wall ${ours_wall} ms, cpu ${ours_cpu} ms"
awk -v a="$ours_wall" -v b="$grep_wall" -v c="$ours_cpu" -v d="$grep_cpu" \
  'BEGIN { printf "ratio classify/grep: wall %.2f, cpu %.2f\n", a / b, c / d }'

status=0
if [ "$grep_lines" != "$ours_lines" ]; then
  echo "FAIL: grep counts $grep_lines matching lines, classify $ours_lines" >&2
  status=1
fi
if ! awk -v c="$ours_cpu" -v d="$grep_cpu" -v m="$max_ratio" 'BEGIN { exit !(c <= m * d) }'; then
  echo "FAIL: classify CPU time is above ${max_ratio}x grep's" >&2
  status=1
fi
exit "$status"
