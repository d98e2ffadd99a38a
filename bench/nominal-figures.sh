#!/usr/bin/env bash
# The figures the tests once held to a nominal value, measured ROUNDS times each and printed
# as a ratio to that value (1.00: exactly what was asked). The tests now judge them against
# a calibration measured beside them (docs/setup.md, "Which tests may depend on the
# machine"); how close they come to the nominal value is this machine's accuracy, here:
#
#   server p50 / (think + work)   a request at 100 a second, 1 ms asleep + 1 ms of CPU
#                                 (was: 2 ms ± 10 %, tests/server.rs)
#   taskset run / asked           an activation's CPU time against its run events: the
#                                 rt-app file's tasks (was: within 5 %, tests/taskset.rs)
#   deadline p50 / period         SCHED_DEADLINE's median lateness, 100 µs every 1 ms
#                                 (was: below a quarter period, tests/deadline.rs; root)
#   deadline share / reserved     the lowest of two cpu children's CPU share against their
#                                 300 µs every 1 ms (was: 90-110 %, tests/deadline.rs; root)
#
#   bench/nominal-figures.sh [ROUNDS]     (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
nice -n 19 cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
measure() { flock /tmp/schedlab-measure.lock "$@"; }
export SCHEDLAB_NOISE_PROBE=off

cat >"$work/set.json" <<'JSON'
{
  "tasks": {
    "small": { "instance": 1, "loop": -1, "run": 1000, "timer": { "ref": "a", "period": 10000 } },
    "big": { "loop": -1, "policy": "SCHED_FIFO", "lock": "m", "run0": 2000, "unlock": "m", "sleep": 500,
             "run1": 1000, "timer": { "ref": "b", "period": 20000 } }
  },
  "global": { "duration": 2, "default_policy": "SCHED_OTHER", "pi_enabled": true }
}
JSON

for ((i = 1; i <= rounds; i++)); do
  measure "$bin" server --json --rps 100 --work 1ms --think 1ms --threads 1 --workers 2 --duration 3s |
    python3 -c 'import json, sys; l = json.loads(sys.stdin.readline()); print("server", l["request_p50_ns"] / 2e6)' >>"$work/ratios"
  measure "$bin" taskset --json --duration 400ms --rt-app "$work/set.json" | python3 -c '
import json, sys
tasks = json.loads(sys.stdin.readline())["per_task"]
asked = {"small": 1000e3, "big": 3000e3}
for t in tasks:
    print("taskset-" + t["name"], t["run_mean_ns"] / asked[t["name"]])' >>"$work/ratios"
  if [ "$(id -u)" = 0 ]; then
    measure "$bin" latency --json --policy deadline --runtime 100us --period 1ms --loops 2000 |
      python3 -c 'import json, sys; l = json.loads(sys.stdin.readline()); print("deadline", l["p50_ns"] / 1e6)' >>"$work/ratios"
    measure "$bin" workload cpu --json --procs 2 --policy deadline --runtime 300us --period 1ms | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
print("deadline-share", l["child_cpu_pct_min"] / l["reserved_pct"])' >>"$work/ratios"
  fi
done

python3 - "$work/ratios" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
names = {"server": "server p50 / (think + work)", "taskset-small": "taskset small run / asked",
         "taskset-big": "taskset big run / asked", "deadline": "deadline p50 / period",
         "deadline-share": "deadline share / reserved"}
for key, label in names.items():
    r = sorted(float(v) for k, v in rows if k == key)
    if r:
        print(f"{label:<30} median {st.median(r):6.3f}  range {r[0]:6.3f} .. {r[-1]:6.3f}  ({len(r)} rounds)")
PY
