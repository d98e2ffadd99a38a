#!/usr/bin/env bash
# Periodic-spike detection on this machine: ROUNDS plain 4 s SCHED_FIFO latency runs
# (5 kHz, one CPU) and ROUNDS with a planted interferer on the same CPU (SCHED_FIFO 99,
# wakes every 100 ms on an absolute clock and spins 300 µs). Prints how many plain runs
# claim a period (false periods: target 0) and how many planted runs find 100 ms ± 5 %
# (target: all but runs whose own noise buries the interferer's spikes), with the periods
# and p values.
#
#   bench/spike-periods.sh [ROUNDS]     (default 10; CPU=N picks the CPU, default the last)
# Needs root (SCHED_FIFO).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
cpu=${CPU:-$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')}
nice -n 19 cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
interferer=""
stop_interferer() {
  if [[ -n "$interferer" ]]; then
    kill "$interferer" 2>/dev/null || true
    wait "$interferer" 2>/dev/null || true
    interferer=""
  fi
}
trap stop_interferer EXIT
trap "exit 130" INT TERM

run() {
  flock /tmp/schedlab-measure.lock "$bin" latency --policy fifo --interval 200us --duration 4s --cpus "$cpu" --json |
    python3 -c 'import json,sys; l=json.loads(sys.stdin.readline()); print(l["spike_period_ns"] or "-", l["spike_period_p"] if l["spike_period_p"] is not None else "-", "p99 %.1f µs" % (l["p99_ns"] / 1e3))'
}

echo "plain runs (period_ns, p, p99):"
plain_claims=0
for ((i = 1; i <= rounds; i++)); do
  line=$(run)
  echo "  $line"
  [[ "$line" == -* ]] || plain_claims=$((plain_claims + 1))
done

python3 - "$cpu" <<'EOF' &
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
clock = lambda: time.clock_gettime(time.CLOCK_MONOTONIC)
beat = clock() + 0.1
while True:
    time.sleep(max(0.0, beat - clock()))
    until = clock() + 0.0003
    while clock() < until:
        pass
    beat += 0.1
EOF
interferer=$!
sleep 0.5
echo "planted runs (period_ns, p, p99):"
found=0
for ((i = 1; i <= rounds; i++)); do
  line=$(run)
  echo "  $line"
  period=${line%% *}
  if [[ "$period" != "-" ]] && python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) / 1e8 - 1) <= 0.05 else 1)' "$period"; then
    found=$((found + 1))
  fi
done
stop_interferer
echo "false periods in plain runs: $plain_claims of $rounds"
echo "planted 100 ms found within ±5 %: $found of $rounds"
