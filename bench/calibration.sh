#!/usr/bin/env bash
# Are the run's answers calibrated on this machine? ROUNDS runs of each of two suites,
# every one adaptive (blocks added until its question is answered, within BUDGET):
#   A/A      SCHED_FIFO against SCHED_RR, one CPU-bound child per CPU: identical by
#            construction (no child ever waits, so the time slice never matters). Counts
#            the runs that call them different (target: at most 1 of 20).
#   planted  the same child with 10 % more Monte Carlo iterations (compare = "iterations"):
#            a 10 % slowdown. Counts the runs that find it, the right side ahead (target:
#            at least 19 of 20).
# Prints each run's verdict, blocks and ratio, then the two counts.
#
#   bench/calibration.sh [ROUNDS] [BUDGET]     (defaults 20 and 20s; needs root for FIFO)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
budget=${2:-20s}
nice -n 19 cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpus=$(nproc)
iterations=40000000

cat >"$work/aa.toml" <<TOML
name = "calibration-aa"
budget = "$budget"
[[experiment]]
family = "workload"
workload = "cpu"
policy = ["fifo", "rr"]
procs = $cpus
iterations = $iterations
repeat = 6
target_ci = "5%"
max_repeat = 200
TOML
cat >"$work/planted.toml" <<TOML
name = "calibration-planted"
budget = "$budget"
[[experiment]]
family = "workload"
workload = "cpu"
policy = "fifo"
procs = $cpus
iterations = [$iterations, $((iterations * 11 / 10))]
compare = "iterations"
repeat = 6
target_ci = "5%"
max_repeat = 200
TOML

verdict() {
  "$bin" report latest --db "$work/r.db" --format json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
f = [x for x in doc["findings"] if x["kind"] in ("best_policy", "compared")][0]
a = f["answer"]
print(a["verdict"], f["best"], a["blocks"], "%.3f" % a["ratio"])'
}

aa_different=0
planted_found=0
for kind in aa planted; do
  echo "$kind runs (verdict, leader, blocks, ratio):"
  for ((i = 1; i <= rounds; i++)); do
    flock /tmp/schedlab-measure.lock "$bin" run "$work/$kind.toml" --db "$work/r.db" >/dev/null 2>&1 || true
    line=$(verdict)
    echo "  $line"
    read -r v best _ <<<"$line"
    if [[ $kind == aa && $v == leads ]]; then aa_different=$((aa_different + 1)); fi
    if [[ $kind == planted && $v == leads && $best == "$iterations" ]]; then planted_found=$((planted_found + 1)); fi
  done
done
echo "A/A called different: $aa_different of $rounds (target: at most 1 of 20)"
echo "planted 10 % slowdown found: $planted_found of $rounds (target: at least 19 of 20)"
