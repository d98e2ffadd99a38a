#!/usr/bin/env bash
# Does a task set's memory stay flat with its length? The rt-taskset suite's three tasks
# (1 kHz, 500 Hz, 100 Hz) under SCHED_OTHER for each LENGTH, and the peak RSS of schedlab
# and its trial process (getrusage of the children, through `schedlab rusage`). Each
# thread keeps HDR histograms, not its activations, so the figure should not grow.
#
#   bench/taskset-rss.sh [LENGTH...]     (defaults: 60s 600s)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/schedlab
lengths=("$@")
[ ${#lengths[@]} -gt 0 ] || lengths=(60s 600s)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for length in "${lengths[@]}"; do
  flock /tmp/schedlab-measure.lock "$bin" rusage --json -o "$out" -- "$bin" taskset --duration "$length" --json \
    --task 'name = "control", period = "1ms", run = "250us"' \
    --task 'name = "sensor", period = "2ms", run = "400us"' \
    --task 'name = "logger", period = "10ms", run = "1500us"' >/dev/null
  rss=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["maxrss_kb"])' "$out")
  echo "task set of $length at 1 kHz + 500 Hz + 100 Hz: peak RSS ${rss} KiB"
done
