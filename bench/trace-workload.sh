#!/usr/bin/env bash
# Seed 002 and seed 003 explained by the kernel's tracepoints, and what tracing costs them.
#   preempt  ROUNDS traced cpu workloads: SCHED_OTHER with 5 children per CPU (each
#            child's preemptions, the share by its siblings, against wait4's involuntary
#            switches) and SCHED_FIFO with one child per CPU (target: no child preempted);
#   io       ROUNDS traced io workloads under OTHER and FIFO: time asleep in the disk (D),
#            preemptions, and the task outside the trial that took the most;
#   ring     traced rings of 2, 8, 32 and 128: switches per hop, wakeup to running,
#            members preempted (what lies behind the knee);
#   cost     ROUNDS pairs, --trace off and on in random order: workload wall (cpu, OTHER,
#            5 per CPU) and ring ns per hop (32 members); the median ratio on/off.
#
#   bench/trace-workload.sh [ROUNDS]     (default 5)
# Needs root (tracefs, SCHED_FIFO).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
nice -n 19 cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
ncpu=$(nproc)
measure() { flock /tmp/schedlab-measure.lock "$bin" "$@"; }

echo "preempt: OTHER x $((5 * ncpu)) children (per child: median preemptions, share by siblings; traced vs wait4) and FIFO x $ncpu"
for ((i = 1; i <= rounds; i++)); do
  other=$(measure workload cpu --policy other --procs $((5 * ncpu)) --iterations 20000000 --trace on --json)
  fifo=$(measure workload cpu --policy fifo --procs "$ncpu" --iterations 20000000 --trace on --json)
  python3 -c '
import json, sys
o, f = (json.loads(a) for a in sys.argv[1:3])
t = o["off_cpu"]
traced = t["preempted_by_siblings"] + t["preempted_by_others"]
ft = f["off_cpu"]
print("  OTHER: %5.1f per child, %3.0f %% by siblings, traced %4d vs nivcsw %4d, lost %d | FIFO: %d preempted (nivcsw %d) by %s" % (
    t["preemptions_p50"], 100 * t["preempted_by_siblings"] / max(traced, 1), traced, o["nivcsw"], o["trace_lost_events"],
    ft["preempted_by_siblings"] + ft["preempted_by_others"], f["nivcsw"],
    ",".join(x["comm"] for x in f["outsiders"] if x["preemptions"]) or "-"))' "$other" "$fifo"
done

echo "io: per child ms asleep in D, preemptions (median), the outside task that took the most"
for ((i = 1; i <= rounds; i++)); do
  for policy in other fifo; do
    measure workload io --policy "$policy" --procs $((2 * ncpu)) --trace on --json | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
t, n = l["off_cpu"], len(l["off_cpu_children"])
top = max(l["outsiders"], key=lambda x: x["behind_ns"] + 1e6 * x["preemptions"], default=None)
print("  %-5s D %6.1f ms  runnable %5.1f ms  preempted %4.1f  by siblings %3d, others %3d  top outsider %s" % (
    l["policy"], t["blocked_ns"] / 1e6 / n, t["runnable_ns"] / 1e6 / n, t["preemptions_p50"],
    t["preempted_by_siblings"], t["preempted_by_others"],
    "%s (prio %d): %d preemptions, %.1f ms" % (top["comm"], top["prio"], top["preemptions"], top["behind_ns"] / 1e6) if top else "-"))'
  done
done

echo "ring: members, switches per hop, wakeups per hop, wakeup to running p50/p99 µs, preempted per hop, migrations"
for procs in 2 8 32 128; do
  measure ring --procs "$procs" --laps 2000 --trace on --json | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
t, h = l["ring_trace"], l["hops"]
print("  %4d  %.2f  %.2f  %6.1f %6.1f  %.2f  %d  (ns/hop %.0f, lost %d)" % (
    l["procs"], t["switches"] / h, t["wakeups"] / h, t["wake_to_run_p50_ns"] / 1e3, t["wake_to_run_p99_ns"] / 1e3,
    (t["preempted_by_members"] + t["preempted_by_others"]) / h, t["migrations"], l["ns_per_hop"], t["lost_events"]))'
done

echo "cost: workload wall s and ring ns/hop with --trace off / on (random order)"
for ((i = 1; i <= rounds; i++)); do
  order=(off on)
  ((RANDOM % 2)) && order=(on off)
  for t in "${order[@]}"; do
    w=$(measure workload cpu --policy other --procs $((5 * ncpu)) --iterations 20000000 --trace "$t" --json)
    r=$(measure ring --procs 32 --laps 2000 --trace "$t" --json)
    echo "$t $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["wall_s"], json.loads(sys.argv[2])["ns_per_hop"])' "$w" "$r")"
  done
done | python3 -c '
import statistics, sys
runs = {"on": [], "off": []}
for line in sys.stdin:
    mode, wall, hop = line.split()
    runs[mode].append((float(wall), float(hop)))
for mode in ("off", "on"):
    print("  %-3s wall %s  ns/hop %s" % (mode, " ".join("%.3f" % r[0] for r in runs[mode]), " ".join("%.0f" % r[1] for r in runs[mode])))
wall = statistics.median(on[0] / off[0] for on, off in zip(runs["on"], runs["off"]))
hop = statistics.median(on[1] / off[1] for on, off in zip(runs["on"], runs["off"]))
print("median ratio on/off: workload wall %.3f, ring ns/hop %.3f" % (wall, hop))'
