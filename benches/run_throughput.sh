#!/usr/bin/env bash
# `sm120-doctor run -- CMD` against CMD run bare: pass-through throughput and added line latency.
#
# Usage: benches/run_throughput.sh [MEGABYTES] [RUNS] [LINES]   (defaults: 100 MB, 5 runs, 400 lines)
# SM120_DOCTOR=PATH picks the binary (default: target/release/sm120-doctor, built if missing).
#
# Throughput: `cat` of a MEGABYTES vLLM-like log (lines as vLLM prints them, a crash at the end),
# read by a consumer that notes when the last byte arrived (monotonic clock, from just before
# the start). Bare: `cat FILE | consumer`. Wrapped: `sm120-doctor run --log-to NEW -- cat FILE |
# consumer` (stderr, where the diagnosis goes, to /dev/null). Reported: MB/s to the last byte
# (pass-through), and MB/s to the doctor's exit (log written, read back and diagnosed, host
# collected) — min / median / max over RUNS, bare and wrapped taken in turn.
#
# Latency: a Python program prints a line every 5 ms holding time.monotonic_ns() at the print;
# the consumer subtracts it from the arrival time (CLOCK_MONOTONIC is one clock for every
# process). p99 per run, bare and wrapped in turn; the added latency is wrapped p99 - bare p99
# of the same round. Targets: >= 100 MB/s pass-through, <= 5 ms added p99. Exit 1 when the
# median misses a target.
set -euo pipefail
cd "$(dirname "$0")/.."
mb="${1:-100}"
runs="${2:-5}"
lines="${3:-400}"
bin="${SM120_DOCTOR:-target/release/sm120-doctor}"
if [[ ! -x "$bin" ]]; then
  cargo build --release --quiet --bin sm120-doctor
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$work/big.log" "$mb" <<'EOF'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
lines = [
    "(EngineCore_DP0 pid=2817) INFO 12-03 08:00:01 [gpu_model_runner.py:2338] Starting to load model Qwen/Qwen3-8B...\n",
    "(Worker_TP0 pid=2951) INFO 12-03 08:00:41 [default_loader.py:267] Loading weights took 38.11 seconds\n",
    "(APIServer pid=2700) INFO 12-03 08:01:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.2 tokens/s, Running: 1 reqs\n",
    "(APIServer pid=2700) INFO:     127.0.0.1:53422 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
]
block = "".join(lines).encode()
target = mb * 1_000_000
with open(path, "wb") as f:
    n = 0
    while n < target:
        f.write(block)
        n += len(block)
    f.write(b"(Worker_TP1 pid=2951) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\n")
EOF
size=$(stat -c %s "$work/big.log")

cat > "$work/sink.py" <<'EOF'
# Read stdin to EOF; print seconds from START_NS (monotonic) to the byte number EXPECT.
import os, sys, time
start, expect = int(os.environ["START_NS"]), int(os.environ["EXPECT"])
got, done_at = 0, None
fd = sys.stdin.fileno()
while True:
    b = os.read(fd, 1 << 20)
    if not b:
        break
    got += len(b)
    if done_at is None and got >= expect:
        done_at = time.monotonic_ns()
if done_at is None:
    sys.exit(f"only {got} of {expect} bytes arrived")
print((done_at - start) / 1e9)
EOF

cat > "$work/tick.py" <<'EOF'
import sys, time
for _ in range(int(sys.argv[1])):
    print(time.monotonic_ns(), flush=True)
    time.sleep(0.005)
EOF

cat > "$work/lat.py" <<'EOF'
# p99 (ms) of arrival - stamp over the lines read.
import sys, time
d = []
for line in sys.stdin:
    now = time.monotonic_ns()
    try:
        d.append((now - int(line)) / 1e6)
    except ValueError:
        pass
d.sort()
print(d[min(len(d) - 1, int(len(d) * 0.99))])
EOF

mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

declare -a bare_mbs wrap_mbs wrap_end_mbs bare_p99 wrap_p99 added
for i in $(seq 1 "$runs"); do
  start=$(mono_ns)
  s=$(START_NS=$start EXPECT=$size bash -c "cat '$work/big.log' | python3 '$work/sink.py'")
  bare_mbs+=("$(python3 -c "print($size/1e6/$s)")")

  start=$(mono_ns)
  s=$(START_NS=$start EXPECT=$size bash -c "'$bin' run --log-to '$work/run$i.log' -- cat '$work/big.log' 2>/dev/null | python3 '$work/sink.py'")
  end=$(mono_ns)
  wrap_mbs+=("$(python3 -c "print($size/1e6/$s)")")
  wrap_end_mbs+=("$(python3 -c "print($size/1e6/(($end-$start)/1e9))")")
  cmp -s "$work/big.log" "$work/run$i.log" || { echo "run$i: the log differs from the output" >&2; exit 1; }
  rm -f "$work/run$i.log"

  b=$(python3 "$work/tick.py" "$lines" | python3 "$work/lat.py")
  w=$("$bin" run --log-to "$work/lat$i.log" -- python3 "$work/tick.py" "$lines" 2>/dev/null | python3 "$work/lat.py")
  rm -f "$work/lat$i.log"
  bare_p99+=("$b")
  wrap_p99+=("$w")
  added+=("$(python3 -c "print($w - $b)")")
done

python3 - "$size" "${bare_mbs[*]}" "${wrap_mbs[*]}" "${wrap_end_mbs[*]}" "${bare_p99[*]}" "${wrap_p99[*]}" "${added[*]}" <<'EOF'
import statistics, sys
size = int(sys.argv[1])
names = ["bare MB/s (last byte)", "run MB/s (last byte)", "run MB/s (doctor exit)",
         "bare p99 ms", "run p99 ms", "added p99 ms"]
vals = [[float(x) for x in a.split()] for a in sys.argv[2:]]
print(f"{size/1e6:.0f} MB pass-through, {len(vals[0])} runs (min / median / max)")
for n, v in zip(names, vals):
    print(f"  {n:24} {min(v):9.2f} / {statistics.median(v):9.2f} / {max(v):9.2f}")
ok = statistics.median(vals[1]) >= 100 and statistics.median(vals[5]) <= 5
print("targets (>= 100 MB/s, <= 5 ms added p99):", "met" if ok else "MISSED")
sys.exit(0 if ok else 1)
EOF
