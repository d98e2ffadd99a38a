#!/usr/bin/env bash
# Does a task set's memory stay flat with its length? The rt-taskset suite's three tasks
# (1 kHz, 500 Hz, 100 Hz) under SCHED_OTHER in one run of LENGTH (default 10 minutes),
# and the resident memory (VmRSS, and the peak VmHWM) of schedlab and of its trial
# process — where the task threads live — read from /proc at 1 minute and at the end.
# Each thread keeps HDR histograms, not its activations, so the figures should not grow;
# the per-activation series goes to a file only when asked (--activations).
#
#   bench/taskset-rss.sh [LENGTH_S]     (default 600; at least 70)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/schedlab
length=${1:-600}
[ "$length" -ge 70 ] || { echo "give at least 70 s" >&2; exit 2; }
kib() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status" 2>/dev/null || echo "?"; }
trial_of() { for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
  grep -qa __trial "/proc/$c/cmdline" 2>/dev/null && { echo "$c"; return; }; done; echo ""; }
report() { # WHEN PID TRIAL
  echo "at $1: schedlab RSS $(kib "$2" VmRSS) KiB (peak $(kib "$2" VmHWM)); trial process RSS $(kib "$3" VmRSS) KiB (peak $(kib "$3" VmHWM))"
}
flock /tmp/schedlab-measure.lock "$bin" taskset --duration "${length}s" --json \
  --task 'name = "control", period = "1ms", run = "250us"' \
  --task 'name = "sensor", period = "2ms", run = "400us"' \
  --task 'name = "logger", period = "10ms", run = "1500us"' >/dev/null &
runner=$!
# flock's child is schedlab.
for _ in $(seq 600); do pid=$(cat "/proc/$runner/task/$runner/children" 2>/dev/null | awk '{print $1}'); [ -n "$pid" ] && break; sleep 1; done
# Wait for the trial process (flock may first wait for another measurement).
for _ in $(seq 3600); do trial=$(trial_of "$pid"); [ -n "$trial" ] && break; sleep 1; done
start=$(date +%s)
sleep 60
report "1 min" "$pid" "$trial"
while [ $(( $(date +%s) - start )) -lt $(( length - 5 )) ]; do sleep 1; done
report "$(( (length - 5) / 60 )) min $(( (length - 5) % 60 )) s" "$pid" "$trial"
wait "$runner"
echo "task set of ${length} s at 1 kHz + 500 Hz + 100 Hz (SCHED_OTHER): done"
