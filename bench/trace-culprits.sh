#!/usr/bin/env bash
# What ran in a late wakeup's place, and what tracing costs, on this machine.
#   planted  ROUNDS 4 s SCHED_FIFO latency runs at 1 kHz with --trace on, beside a
#            SCHED_FIFO 99 thread named "sl-spinner" on the same CPU that spins 1 ms
#            every 50 ms: of the spikes it took time in, how many name it the top culprit
#            with its time within 10 % of the spike's lateness above the fastest wakeup
#            (target ≥ 90 %), whether it leads the tail by share and by the spikes it took
#            time in (among tasks), and the events lost (target 0);
#   net_rx   ROUNDS such runs beside loopback UDP traffic sent from the same CPU: a
#            SCHED_FIFO 99 process "sl-udp-tx" sends 200 64-byte datagrams every 20.37 ms
#            to a socket on 127.0.0.1 that "sl-udp-rx" on the other CPUs drains, so the
#            datagrams are received in the NET_RX softirq of the measured CPU: in how many
#            runs the tail's culprits name NET_RX (target all) and its share, and of the
#            spikes the traffic took time in, how many NET_RX took time in and its part of
#            the traffic's time there (the rest is the sender's: Python's, a larger part
#            than tests/trace.rs's sender in Rust leaves);
#   cost     ROUNDS pairs of plain 4 s runs at 5 kHz, --trace off and on in random order:
#            the median p50 and p99 ratio on/off (within the A/A noise: tracing may be on
#            by default) and, with tracing on, the share of the tail's excess above the
#            p99 named (a task, an irq, a softirq, the timer, the wait for the CPU), with
#            the share not visible to the kernel beside it;
#   plain    ROUNDS plain 10 s runs at 1 kHz (the defaults) with --trace on: per run the
#            share of the tail's excess above the p99 named, the share not visible to the
#            kernel, the most of it the CPU's steal over the run could be (the guest
#            counts steal per tick, never per spike), and the events lost (target 0).
#
#   bench/trace-culprits.sh [ROUNDS]     (default 5; CPU=N picks the CPU, default the last)
# Needs root (SCHED_FIFO, tracefs).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
cpu=${CPU:-$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')}
nice -n 19 cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
planted="" # the planted source's pid
stop_planted() {
  if [[ -n "$planted" ]]; then
    kill "$planted" 2>/dev/null || true
    wait "$planted" 2>/dev/null || true
    planted=""
  fi
}
trap stop_planted EXIT
trap "exit 130" INT TERM

# One SCHED_FIFO run on the CPU for $1 (a duration), with the flags that follow: its JSON line.
latency() {
  local duration=$1
  shift
  flock /tmp/schedlab-measure.lock "$bin" latency --policy fifo --cpus "$cpu" --duration "$duration" --json "$@" |
    head -1
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
planted=$!
sleep 0.5
echo "planted: spikes it took time in, of them named top culprit with its time within 10 %, tail leader by share, task in the most spikes, lost events"
for ((i = 1; i <= rounds; i++)); do
  latency 4s --interval 1ms --trace on | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
fastest = l["min_ns"]
mine = lambda c: c["source"].get("comm") == "sl-spinner"
caused = [s for s in l["attributed_spikes"] if any(mine(c) for c in s["culprits"])]
named = [s for s in caused if mine(s["culprits"][0]) and abs(s["culprits"][0]["ns"] - (s["latency_ns"] - fastest)) <= 0.1 * (s["latency_ns"] - fastest)]
lead = l["tail_culprits"][0]["source"].get("comm", l["tail_culprits"][0]["source"]["kind"]) if l["tail_culprits"] else "-"
tasks = [c for c in l["tail_culprits"] if c["source"]["kind"] == "task"]
busiest = max(tasks, key=lambda c: c["spikes"])["source"]["comm"] if tasks else "-"
print("  %3d %3d  %-12s %-12s lost %d" % (len(caused), len(named), lead, busiest, l["trace_lost_events"]))'
done | tee /tmp/trace-culprits.$$
stop_planted
python3 - /tmp/trace-culprits.$$ <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
caused = sum(int(r[0]) for r in rows)
named = sum(int(r[1]) for r in rows)
print(f"planted: named the top culprit of {named} of {caused} spikes it took time in ({100 * named / max(caused, 1):.0f} %); tail leader sl-spinner by share in {sum(r[2] == 'sl-spinner' for r in rows)} of {len(rows)} runs, the task in the most tail spikes in {sum(r[3] == 'sl-spinner' for r in rows)} of {len(rows)}")
PY
rm -f /tmp/trace-culprits.$$

python3 - "$cpu" <<'PY' &
import os, socket, sys, time
cpu = int(sys.argv[1])
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.bind(("127.0.0.1", 0))
rx.settimeout(0.2)
sender = os.getpid()
if os.fork() == 0:
    with open("/proc/self/comm", "w") as f:
        f.write("sl-udp-rx")
    os.sched_setaffinity(0, (os.sched_getaffinity(0) - {cpu}) or {cpu})
    while os.getppid() == sender:  # until the sender is stopped
        try:
            rx.recv(2048)
        except socket.timeout:
            pass
    os._exit(0)
with open("/proc/self/comm", "w") as f:
    f.write("sl-udp-tx")
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
to, payload = rx.getsockname(), b"x" * 64
# No multiple of the 1 ms interval: each burst meets the measured thread at a new phase.
period = 0.02037
clock = lambda: time.clock_gettime(time.CLOCK_MONOTONIC)
beat = clock() + period
while True:
    time.sleep(max(0.0, beat - clock()))
    for _ in range(200):
        tx.sendto(payload, to)
    beat += period
PY
planted=$!
sleep 0.5
echo "net_rx: spikes the traffic took time in, of them with NET_RX time, NET_RX's part of the traffic's time there, its rank and share of the tail, lost events"
for ((i = 1; i <= rounds; i++)); do
  latency 4s --interval 1ms --trace on | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
net_rx = lambda c: c["source"] == {"kind": "softirq", "name": "NET_RX"}
traffic = lambda c: net_rx(c) or c["source"].get("comm") == "sl-udp-tx"
caused = [s for s in l["attributed_spikes"] if any(traffic(c) for c in s["culprits"])]
with_net_rx = [s for s in caused if any(net_rx(c) for c in s["culprits"])]
part = sum(c["ns"] for s in caused for c in s["culprits"] if net_rx(c)) / max(1, sum(c["ns"] for s in caused for c in s["culprits"] if traffic(c)))
tail = l["tail_culprits"]
rank = next((i for i, c in enumerate(tail) if net_rx(c)), None)
share = tail[rank]["share"] if rank is not None else 0.0
print("  %3d %3d  %3.0f %%  %s %5.1f %%  lost %d" % (len(caused), len(with_net_rx), 100 * part, "-" if rank is None else rank + 1, 100 * share, l["trace_lost_events"]))'
done | tee /tmp/trace-culprits.$$
stop_planted
python3 - /tmp/trace-culprits.$$ <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
named = [r for r in rows if r[4] != "-"]
shares = [float(r[5]) for r in named] or [0.0]
caused = sum(int(r[0]) for r in rows)
with_net_rx = sum(int(r[1]) for r in rows)
parts = [float(r[2]) for r in rows]
print(f"net_rx: NET_RX named among the tail culprits in {len(named)} of {len(rows)} runs, share median {statistics.median(shares):.0f} % (min {min(shares):.0f} %); it took time in {with_net_rx} of {caused} spikes the traffic took time in, {statistics.median(parts):.0f} % of the traffic's time there (median; the rest the sender's own)")
PY
rm -f /tmp/trace-culprits.$$

echo "cost: p50 and p99 µs with --trace off / on (random order), and the tail's excess attributed with it on"
for ((i = 1; i <= rounds; i++)); do
  order=(off on)
  ((RANDOM % 2)) && order=(on off)
  for t in "${order[@]}"; do
    echo "$t $(latency 4s --interval 200us --trace "$t")"
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
        # Named: every source the kernel saw (a task, an irq, a softirq, the timer, the
        # wait for the CPU); "not visible to the kernel" is reported beside it.
        attributed.append(l["tail_account"]["named_share"])
for mode in ("off", "on"):
    print("  %-3s p50 %s  p99 %s" % (mode, " ".join("%.1f" % (r[0] / 1e3) for r in runs[mode]), " ".join("%.1f" % (r[1] / 1e3) for r in runs[mode])))
p50 = statistics.median(on[0] / off[0] for on, off in zip(runs["on"], runs["off"]))
p99 = statistics.median(on[1] / off[1] for on, off in zip(runs["on"], runs["off"]))
print("median ratio on/off: p50 %.3f, p99 %.3f" % (p50, p99))
print("tail excess named: median %.0f %% (min %.0f %%); the rest not visible to the kernel" % (100 * statistics.median(attributed), 100 * min(attributed)))'

echo "plain: 10 s runs at 1 kHz: p99, spikes, the tail's excess named / runnable (of it) / not visible to the kernel / the most of that steal could be, lost events, the top culprits"
for ((i = 1; i <= rounds; i++)); do
  latency 10s --trace on | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
tail = l["tail_culprits"]
account = l["tail_account"]
label = lambda s: s.get("comm") or s.get("name") or s["kind"]
runnable = sum(c["share"] for c in tail if c["source"]["kind"] == "runnable")
steal = account.get("steal_at_most_share")
steal_text = "unknown" if steal is None else "%.1f" % (100 * steal)
print("  p99 %6.1f µs  spikes %3d  named %5.1f %%  runnable %4.1f %%  unseen %5.1f %%  steal<= %s %%  steal_ms %s  lost %d  %s" % (
    l["p99_ns"] / 1e3, len(l["attributed_spikes"]), 100 * account["named_share"], 100 * runnable,
    100 * account["unseen_share"], steal_text, "%.0f" % (account.get("steal_ns", 0) / 1e6), l["trace_lost_events"],
    ", ".join("%s %.0f %%" % (label(c["source"]), 100 * c["share"]) for c in tail[:3])))'
done | tee /tmp/trace-culprits.$$
python3 - /tmp/trace-culprits.$$ <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
col = lambda name: [float(r[r.index(name) + 1]) for r in rows]
named, unseen, lost = col("named"), col("unseen"), [int(x) for x in col("lost")]
steal = [float(x) for x in (r[r.index("steal<=") + 1] for r in rows) if x != "unknown"]
left = [u - s for u, s in zip(unseen, steal)] if len(steal) == len(unseen) else []
print(f"plain 10 s, {len(rows)} runs: tail excess named {statistics.median(named):.0f} % median ({min(named):.0f}-{max(named):.0f} %); "
      f"not visible to the kernel {statistics.median(unseen):.0f} % ({min(unseen):.0f}-{max(unseen):.0f} %); "
      + (f"steal could be at most {statistics.median(steal):.0f} % ({min(steal):.0f}-{max(steal):.0f} %), so not visible and not steal at least {statistics.median(left):.0f} % ({min(left):.0f}-{max(left):.0f} %); " if left else "steal unknown; ")
      + f"events lost: {sum(lost)} (most in a run {max(lost)})")
PY
rm -f /tmp/trace-culprits.$$
