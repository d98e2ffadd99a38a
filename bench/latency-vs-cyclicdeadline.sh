#!/usr/bin/env bash
# schedlab's SCHED_DEADLINE lateness beside rt-tests' cyclicdeadline (Debian rt-tests),
# alternated in one run with the same reservation: each job's start against its period's
# start. Prints p50 and p99 of both per round, then the medians over rounds side by side
# with their ratio (schedlab / cyclicdeadline).
#
# cyclicdeadline gives each thread runtime = 60 % of its interval and prints only min,
# avg and max; its per-job lateness ("start at ... off=N", whole µs) goes to the ftrace
# marker, so the percentiles are computed from the trace. It refuses runtimes below 2 ms
# unless it can switch HRTICK on through debugfs (which kernel lockdown forbids here),
# hence the default interval of 5 ms (runtime 3 ms). Both tools run unpinned: a deadline
# task may not be pinned to part of its root domain.
#
#   bench/latency-vs-cyclicdeadline.sh [ROUNDS] [SECONDS] [INTERVAL_US]   (defaults: 3, 10, 5000)
# Needs root (SCHED_DEADLINE, tracefs).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-10}
interval_us=${3:-5000}
runtime_us=$((interval_us * 60 / 100))

if ! command -v cyclicdeadline >/dev/null; then
  echo "installing rt-tests for cyclicdeadline" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-tests >/dev/null
fi
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab

# cyclicdeadline writes its marker to <debugfs>/tracing/trace_marker: mount debugfs if it
# is not, size the buffer for every job, and put everything back as it was on exit.
mounted_debugfs=
if ! mountpoint -q /sys/kernel/debug; then
  mount -t debugfs none /sys/kernel/debug
  mounted_debugfs=1
fi
tracing=/sys/kernel/debug/tracing
old_on=$(cat "$tracing/tracing_on")
# "7 (expanded: 1408)": the size the buffer takes once tracing is used.
old_kb=$(sed -e 's/.*expanded: \([0-9]*\).*/\1/' -e 's/ .*//' "$tracing/buffer_size_kb")
results=$(mktemp)
restore() {
  echo "$old_on" >"$tracing/tracing_on"
  echo >"$tracing/trace"
  echo "$old_kb" >"$tracing/buffer_size_kb"
  rm -f "$results" "$results.cd.json"
  if [ -n "$mounted_debugfs" ]; then umount /sys/kernel/debug; fi
}
trap restore EXIT
# About 120 bytes a job, twice over.
echo $((seconds * 1000000 / interval_us * 240 / 1024 + 1024)) >"$tracing/buffer_size_kb"

for ((i = 1; i <= rounds; i++)); do
  "$bin" latency --policy deadline --runtime "${runtime_us}us" --period "${interval_us}us" --duration "${seconds}s" --json |
    python3 -c 'import json,sys; l=json.loads(sys.stdin.readline()); print("schedlab", l["samples"], l["p50_ns"]/1e3, l["p99_ns"]/1e3, l["max_ns"]/1e3, l["missed_deadlines"])' >>"$results"
  echo >"$tracing/trace"
  echo 1 >"$tracing/tracing_on"
  cyclicdeadline -D "$seconds" -i "$interval_us" -t 1 --json="$results.cd.json" >/dev/null
  echo 0 >"$tracing/tracing_on"
  python3 bench/cyclicdeadline.py row "$tracing/trace" "$results.cd.json" >>"$results"
done

python3 bench/cyclicdeadline.py summary "$results" "$runtime_us" "$interval_us" "both measure on CLOCK_MONOTONIC_RAW"
