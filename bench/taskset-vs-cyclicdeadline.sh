#!/usr/bin/env bash
# A taskset DEADLINE task's wakeup beside rt-tests' cyclicdeadline (Debian rt-tests),
# alternated in one run with the same reservation: schedlab's from each activation's ideal
# start (its absolute period timer) to the task running, cyclicdeadline's each job's start
# against its period's start. Prints p50 and p99 of both per round, then the medians over
# rounds side by side with their ratio (schedlab / cyclicdeadline). The taskset task runs
# 50 µs a job (cyclicdeadline's jobs do next to nothing), reservation as cyclicdeadline's:
# runtime = 60 % of the interval. See bench/latency-vs-cyclicdeadline.sh for the latency
# family's and for how cyclicdeadline's per-job lateness is read from its trace markers.
#
#   bench/taskset-vs-cyclicdeadline.sh [ROUNDS] [SECONDS] [INTERVAL_US]   (defaults: 3, 10, 5000)
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

# cyclicdeadline writes a marker for every job to <debugfs>/tracing/trace_marker, the
# global trace buffer's, which other people's tools use: it is neither cleared nor
# resized here. cyclicdeadline runs in a private mount namespace where a regular file (in
# /dev/shm, memory as the ring buffer is) is bound over trace_marker, so its markers land
# in that file, and the namespace's mounts go with it.
results=$(mktemp)
markers=$(mktemp -p /dev/shm 2>/dev/null || mktemp)
trap 'rm -f "$results" "$results.cd.json" "$markers"' EXIT

for ((i = 1; i <= rounds; i++)); do
  flock /tmp/schedlab-measure.lock "$bin" taskset --policy deadline --duration "${seconds}s" --json \
    --task "name = \"cd\", period = \"${interval_us}us\", runtime = \"${runtime_us}us\", run = \"50us\"" |
    python3 -c 'import json,sys; l=json.loads(sys.stdin.readline()); t=l["per_task"][0]; print("schedlab", t["activations"], t["wake_p50_ns"]/1e3, t["wake_p99_ns"]/1e3, t["wake_max_ns"]/1e3, t["misses"])' >>"$results"
  : >"$markers"
  flock /tmp/schedlab-measure.lock unshare -m --propagation private sh -c '
    mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
    mount --bind "$1" /sys/kernel/debug/tracing/trace_marker
    exec cyclicdeadline -D "$2" -i "$3" -t 1 --json="$4" >/dev/null' sh "$markers" "$seconds" "$interval_us" "$results.cd.json"
  python3 bench/cyclicdeadline.py row "$markers" "$results.cd.json" >>"$results"
done

python3 bench/cyclicdeadline.py summary "$results" "$runtime_us" "$interval_us" "schedlab measures on CLOCK_MONOTONIC"
