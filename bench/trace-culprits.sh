#!/usr/bin/env bash
# What ran in a late wakeup's place, and what tracing costs, on this machine.
#   planted  ROUNDS 4 s SCHED_FIFO latency runs at 1 kHz with --trace on, beside a
#            SCHED_FIFO 99 thread named "sl-spinner" on the same CPU that spins 1 ms
#            every 50 ms: of the spikes it took time in, how many name it the top culprit
#            with its time within 10 % of the spike's lateness above the median (target
#            ≥ 90 %), whether it leads the tail, and the events lost (target 0);
#   cost     ROUNDS pairs of plain 4 s runs at 5 kHz, --trace off and on in random order:
#            the median p50 and p99 ratio on/off (within the A/A noise: tracing may be on
#            by default) and, with tracing on, the share of the tail's excess above the
#            p99 attributed to a named source or to "not visible to the kernel".
#
#   bench/trace-culprits.sh [ROUNDS]     (default 5; CPU=N picks the CPU, default the last)
# Needs root (SCHED_FIFO, tracefs).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
cpu=${CPU:-$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')}
nice -n 19 cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
spinner=""
stop_spinner() {
  if [[ -n "$spinner" ]]; then
    kill "$spinner" 2>/dev/null || true
    wait "$spinner" 2>/dev/null || true
    spinner=""
  fi
}
trap stop_spinner EXIT
trap "exit 130" INT TERM

latency() {
  flock /tmp/schedlab-measure.lock "$bin" latency --policy fifo --cpus "$cpu" --duration 4s --json "$@" | head -1
}

python3 - "$cpu" <<'PY' &
import os, sys, time
with open("/proc/self/comm", "w") as f:
    f.write("sl-spinner")
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
clock = lambda: time.clock_gettime(time.CLOCK_MONOTONIC)
beat = clock() + 0.05
while True:
    time.sleep(max(0.0, beat - clock()))
    until = clock() + 0.001
    while clock() < until:
        pass
    beat += 0.05
PY
spinner=$!
sleep 0.5
echo "planted: spikes it took time in, of them named top culprit with its time within 10 %, tail leader, lost events"
for ((i = 1; i <= rounds; i++)); do
  latency --interval 1ms --trace on | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
p50 = l["p50_ns"]
mine = lambda c: c["source"].get("comm") == "sl-spinner"
caused = [s for s in l["attributed_spikes"] if any(mine(c) for c in s["culprits"])]
named = [s for s in caused if mine(s["culprits"][0]) and abs(s["culprits"][0]["ns"] - (s["latency_ns"] - p50)) <= 0.1 * (s["latency_ns"] - p50)]
lead = l["tail_culprits"][0]["source"].get("comm", l["tail_culprits"][0]["source"]["kind"]) if l["tail_culprits"] else "-"
print("  %3d %3d  %-12s lost %d" % (len(caused), len(named), lead, l["trace_lost_events"]))'
done | tee /tmp/trace-culprits.$$
stop_spinner

echo "cost: p50 and p99 µs with --trace off / on (random order), and the tail's excess attributed with it on"
for ((i = 1; i <= rounds; i++)); do
  order=(off on)
  ((RANDOM % 2)) && order=(on off)
  for t in "${order[@]}"; do
    echo "$t $(latency --interval 200us --trace "$t")"
  done
done | python3 -c '
import json, statistics, sys
runs = {"on": [], "off": []}
attributed = []
for line in sys.stdin:
    mode, doc = line.split(" ", 1)
    l = json.loads(doc)
    runs[mode].append((l["p50_ns"], l["p99_ns"]))
    if mode == "on":
        tail = l.get("tail_culprits") or []
        # Every source but "runnable" is named (a task, an irq, a softirq, the timer) or
        # the class the kernel cannot see; runnable time is the wait itself.
        attributed.append(sum(c["share"] for c in tail if c["source"]["kind"] != "runnable"))
for mode in ("off", "on"):
    print("  %-3s p50 %s  p99 %s" % (mode, " ".join("%.1f" % (r[0] / 1e3) for r in runs[mode]), " ".join("%.1f" % (r[1] / 1e3) for r in runs[mode])))
p50 = statistics.median(on[0] / off[0] for on, off in zip(runs["on"], runs["off"]))
p99 = statistics.median(on[1] / off[1] for on, off in zip(runs["on"], runs["off"]))
print("median ratio on/off: p50 %.3f, p99 %.3f" % (p50, p99))
print("tail excess attributed (named or not visible to the kernel): median %.0f %% (min %.0f %%)" % (100 * statistics.median(attributed), 100 * min(attributed)))'
python3 - /tmp/trace-culprits.$$ <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
caused = sum(int(r[0]) for r in rows)
named = sum(int(r[1]) for r in rows)
print(f"planted: named the top culprit of {named} of {caused} spikes it took time in ({100 * named / max(caused, 1):.0f} %); tail leader sl-spinner in {sum(r[2] == 'sl-spinner' for r in rows)} of {len(rows)} runs")
PY
rm -f /tmp/trace-culprits.$$
