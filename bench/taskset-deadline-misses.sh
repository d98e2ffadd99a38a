#!/usr/bin/env bash
# Does an admitted SCHED_DEADLINE task set meet every deadline on an idle machine? The
# rt-taskset suite's three tasks (1 kHz, 500 Hz, 100 Hz, 60 % of a CPU), with and without
# their shared priority-inheritance mutex, under deadline as the kernel gives it and with
# --reclaim (SCHED_FLAG_RECLAIM), in ROUNDS alternated rounds of LENGTH seconds each; the
# misses and incidents of each run, then the totals. Nothing else should be running.
#
#   bench/taskset-deadline-misses.sh [ROUNDS] [LENGTH_S]     (default 4 rounds of 10 s)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/schedlab
rounds=${1:-4}
length=${2:-10}
plain=(--task 'name = "control", period = "1ms", run = "250us"'
  --task 'name = "sensor", period = "2ms", run = "400us"'
  --task 'name = "logger", period = "10ms", run = "1500us"')
locked=(--task 'name = "control", period = "1ms", events = [{ run = "150us" }, { lock = "state" }, { run = "100us" }, { unlock = "state" }]'
  --task 'name = "sensor", period = "2ms", run = "400us"'
  --task 'name = "logger", period = "10ms", events = [{ lock = "state" }, { run = "300us" }, { unlock = "state" }, { run = "1200us" }]')
declare -A misses incidents acts
run() { # LABEL SET-NAME [--reclaim]
  local label=$1 set=$2
  shift 2
  local -n tasks=$set
  local line
  line=$(flock /tmp/schedlab-measure.lock "$bin" taskset --policy deadline --duration "${length}s" --json "$@" "${tasks[@]}")
  local m i a
  m=$(jq -r '.misses' <<<"$line")
  i=$(jq -r '.miss_bursts' <<<"$line")
  a=$(jq -r '.activations' <<<"$line")
  printf '%-28s %6s misses %4s incidents in %6s activations\n' "$label" "$m" "$i" "$a"
  misses[$label]=$(( ${misses[$label]:-0} + m ))
  incidents[$label]=$(( ${incidents[$label]:-0} + i ))
  acts[$label]=$(( ${acts[$label]:-0} + a ))
}
for r in $(seq "$rounds"); do
  echo "round $r"
  run "no mutex, deadline" plain
  run "no mutex, deadline --reclaim" plain --reclaim
  run "mutex, deadline" locked
  run "mutex, deadline --reclaim" locked --reclaim
done
echo "totals over $rounds rounds of ${length} s:"
for label in "no mutex, deadline" "no mutex, deadline --reclaim" "mutex, deadline" "mutex, deadline --reclaim"; do
  printf '%-28s %6s misses %4s incidents in %7s activations\n' "$label" "${misses[$label]}" "${incidents[$label]}" "${acts[$label]}"
done
echo "the machine meanwhile: $(cat /proc/loadavg)"
