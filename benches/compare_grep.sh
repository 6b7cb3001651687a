#!/usr/bin/env bash
# classify vs `grep -E -c` on the same generated log with the same signature patterns.
#
# Usage: benches/compare_grep.sh [MEGABYTES] [MAX_RATIO]   (defaults: 100 MB, 1.5)
# SM120_BIN=PATH runs that build of sm120-doctor instead of target/release's (another commit's).
#
# Both run on the file the way a user runs them: `sm120-doctor classify --log FILE --format json`
# is the streamed path (blocks through Scanner::scan_reader, normalisation, wrapped-line joins,
# ranking). Seven runs each, taken in turn (grep, classify, grep, ...) so that a change in the
# machine's speed hits both; min/median/max of wall and CPU (user+sys) time in ms, and the
# ratio of the medians.
#
# Fails (non-zero exit) when a run fails (grep: exit 0 or 1 = no match; classify: exit 0 or 1 =
# findings), when the two disagree on the number of matching lines, or when classify's CPU time
# is above MAX_RATIO times grep's (medians). On this generated log no signature is set aside by
# context rules and no match spans a wrapped line, so every line grep counts is a line classify reports,
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

# One timed run of "$@": appends "wall_ms cpu_ms" to file $1.
timed() {
  local into="$1"
  shift
  # Not /dev/null: GNU grep stops at the first match when its output goes there.
  run_ok "$@"
  # GNU time writes "Command exited with non-zero status" first when the exit code is not 0.
  read -r wall user sys < <(tail -n 1 "$work/time")
  awk -v x="$wall" -v u="$user" -v s="$sys" \
    'BEGIN { printf "%d %d\n", x * 1000, (u + s) * 1000 }' >> "$into"
}

# min median max of column $2 of file $1.
spread() {
  cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { printf "%d %d %d", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

runs=7
: > "$work/grep.times"
: > "$work/ours.times"
for _ in $(seq "$runs"); do
  timed "$work/grep.times" grep -E -c -f "$work/patterns.ere" "$work/bench.log"
  grep_lines=$(cat "$work/out")
  timed "$work/ours.times" "${SM120_BIN:-./target/release/sm120-doctor}" classify --log "$work/bench.log" --format json
done
read -r gw_min grep_wall gw_max <<< "$(spread "$work/grep.times" 1)"
read -r gc_min grep_cpu gc_max <<< "$(spread "$work/grep.times" 2)"
read -r ow_min ours_wall ow_max <<< "$(spread "$work/ours.times" 1)"
read -r oc_min ours_cpu oc_max <<< "$(spread "$work/ours.times" 2)"
# Distinct matching lines in classify's JSON `matches` (one file, so the line number is the
# key; the `run` part names lines too, which grep's patterns do not count).
# A line repeated many times is listed first and last only, the rest counted in
# `repeats_left_out`: those lines match too.
ours_lines=$(python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["matches"]; print(len({x["line"] for x in m}) + sum(x.get("repeats_left_out", 0) for x in m))' "$work/out")

echo "log: $(du -h "$work/bench.log" | cut -f1), patterns: $(wc -l < "$work/patterns.ere")"
echo "grep -E -c matching lines:            $grep_lines"
echo "sm120-doctor classify matching lines: $ours_lines"
echo "runs: $runs each, in turn; ms as min / median / max"
echo "grep -E -c:            wall $gw_min / $grep_wall / $gw_max, cpu $gc_min / $grep_cpu / $gc_max"
echo "sm120-doctor classify: wall $ow_min / $ours_wall / $ow_max, cpu $oc_min / $ours_cpu / $oc_max"
awk -v a="$ours_wall" -v b="$grep_wall" -v c="$ours_cpu" -v d="$grep_cpu" \
  'BEGIN { printf "ratio classify/grep (medians): wall %.2f, cpu %.2f\n", a / b, c / d }'

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
