#!/usr/bin/env bash
# Does a task set's memory stay flat with its length? The rt-taskset suite's three tasks
# (1 kHz, 500 Hz, 100 Hz) under SCHED_OTHER in one run of LENGTH (default 10 minutes),
# twice: without, then with --activations (every activation streamed to a CSV), and the
# resident memory (VmRSS, and the peak VmHWM) of schedlab and of its trial process —
# where the task threads and the activations' writer live — read from /proc at 1 minute
# and near the end. Each thread keeps HDR histograms, not its activations, and the
# writer's channel is bounded, so the figures should not grow; the CSV grows on disk.
#
#   bench/taskset-rss.sh [LENGTH_S]     (default 600; at least 70)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/schedlab
length=${1:-600}
[ "$length" -ge 70 ] || { echo "give at least 70 s" >&2; exit 2; }
csvdir=$(mktemp -d)
trap 'rm -rf "$csvdir"' EXIT
kib() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status" 2>/dev/null || echo "?"; }
trial_of() { for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
  grep -qa __trial "/proc/$c/cmdline" 2>/dev/null && { echo "$c"; return; }; done; echo ""; }
report() { # MODE WHEN PID TRIAL
  echo "$1, at $2: schedlab RSS $(kib "$3" VmRSS) KiB (peak $(kib "$3" VmHWM)); trial process RSS $(kib "$4" VmRSS) KiB (peak $(kib "$4" VmHWM))"
}
measure() { # MODE [EXTRA ARGS...]
  local mode=$1
  shift
  flock /tmp/schedlab-measure.lock "$bin" taskset --duration "${length}s" --json "$@" \
    --task 'name = "control", period = "1ms", run = "250us"' \
    --task 'name = "sensor", period = "2ms", run = "400us"' \
    --task 'name = "logger", period = "10ms", run = "1500us"' >/dev/null &
  local runner=$! pid="" trial=""
  # flock's child is schedlab.
  for _ in $(seq 600); do pid=$(cat "/proc/$runner/task/$runner/children" 2>/dev/null | awk '{print $1}'); [ -n "$pid" ] && break; sleep 1; done
  # Wait for the trial process (flock may first wait for another measurement).
  for _ in $(seq 3600); do trial=$(trial_of "$pid"); [ -n "$trial" ] && break; sleep 1; done
  local start
  start=$(date +%s)
  sleep 60
  report "$mode" "1 min" "$pid" "$trial"
  while [ $(( $(date +%s) - start )) -lt $(( length - 5 )) ]; do sleep 1; done
  report "$mode" "$(( (length - 5) / 60 )) min $(( (length - 5) % 60 )) s" "$pid" "$trial"
  wait "$runner"
}
measure "histograms only"
measure "with --activations" --activations "$csvdir/acts.csv"
echo "--activations wrote $(( $(wc -l <"$csvdir/acts.csv") - 1 )) rows, $(( $(stat -c %s "$csvdir/acts.csv") / 1024 )) KiB"
echo "task set of ${length} s at 1 kHz + 500 Hz + 100 Hz (SCHED_OTHER): done"
