#!/usr/bin/env bash
# The built-in rt-under-load suite: timer latency as SCHED_OTHER and SCHED_FIFO, idle and
# beside a cpu, io or pipe load (one instance per CPU). Prints per load the median p99
# of each policy and its ratio to the same policy's idle p99, the load's median
# throughput, and the suite's wall time. The classic picture: FIFO's ratios stay near 1,
# OTHER's grow. Exits 1 if any trial is not ok.
#
#   bench/rt-under-load.sh
#   SCHEDLAB=/path/to/schedlab bench/rt-under-load.sh   (default: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")

work=$(mktemp -d -t schedlab-rt-under-load.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== rt-under-load ($bin)"
t0=$(date +%s.%N)
rc=0
(cd "$work" && "$bin" run rt-under-load --db "$work/rt.db" >"$work/run.log" 2>&1) || rc=$?
t1=$(date +%s.%N)
if ((rc != 0 && rc != 3)); then # 3: finished, some trials not ok
  echo "schedlab run exited $rc:"
  tail -5 "$work/run.log"
  exit 1
fi
"$bin" export 1 --db "$work/rt.db" -o "$work/rt.json"
python3 - "$work/rt.json" "$t0" "$t1" <<'PY'
import collections, json, statistics, sys
run = json.load(open(sys.argv[1]))["runs"][0]
trials = run["trials"]
bad = [t for t in trials if t["status"] != "ok"]
p99 = collections.defaultdict(list)
push = collections.defaultdict(list)
for t in trials:
    if t["status"] != "ok":
        continue
    f = t["figures"]
    load = t["params"].get("load", "none").split(":")[0]
    p99[(load, t["params"]["policy"])].append(f["p99_ns"] / 1000)
    rate = {"cpu": ("load_loops_per_s", "loops/s"), "io": ("load_io_bytes_per_s", "B/s"),
            "pipe": ("load_messages_per_s", "msg/s")}.get(load)
    if rate:
        push[load].append((f[rate[0]], rate[1]))
med = {k: statistics.median(v) for k, v in p99.items()}
print(f"{'load':6} {'OTHER p99 µs':>13} {'x idle':>7} {'FIFO p99 µs':>12} {'x idle':>7}  load pushed (median, both policies)")
for load in ["none", "cpu", "io", "pipe"]:
    cells = []
    for policy in ["other", "fifo"]:
        v, idle = med.get((load, policy)), med.get(("none", policy))
        cells.append(f"{v:13.1f}" if v is not None else f"{'-':>13}")
        cells.append(f"{v / idle:7.2f}" if v is not None and idle else f"{'-':>7}")
    rates = push.get(load)
    pushed = f"{statistics.median(r for r, _ in rates):,.0f} {rates[0][1]}" if rates else "-"
    print(f"{load:6} {cells[0]} {cells[1]} {cells[2][1:]} {cells[3]}  {pushed}")
print(f"(p99 of each trial's 2000 wakeups at 500 µs; the median over {run['planned'] // 8} repeats)")
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"wall: {wall:.1f} s; trials: {len(trials)} stored, {len(bad)} not ok")
for t in bad:
    print(f"  not ok: {t['params']}: {t['reason']}")
sys.exit(1 if bad else 0)
PY
