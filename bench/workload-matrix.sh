#!/usr/bin/env bash
# The 2014 policy study at a small scale: 3 workloads x OTHER/FIFO/RR x PROCS x REPEAT.
# Prints each workload's table, then the classic findings as ratios:
#   - CPU-bound: involuntary switches under SCHED_OTHER vs the real-time policies;
#   - I/O-bound: median wall time of the real-time policies vs SCHED_OTHER.
#
#   bench/workload-matrix.sh [PROCS] [REPEAT]      (defaults: "4,16" and 3)
# Needs root (or CAP_SYS_NICE) for SCHED_FIFO and SCHED_RR.
set -euo pipefail
cd "$(dirname "$0")/.."
procs=${1:-4,16}
repeat=${2:-3}
cargo build --release --quiet
bin=target/release/schedlab
json=$(mktemp)
trap 'rm -f "$json"' EXIT

for w in cpu io mixed; do
  echo "running $w ..." >&2
  "$bin" workload "$w" --procs "$procs" --policy other,fifo,rr --repeat "$repeat" --json >>"$json"
done

python3 - "$json" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for workload in ("cpu", "io", "mixed"):
    print(f"== {workload}")
    print(f"{'policy':8} {'procs':>5} {'runs':>5} {'wall med s':>10} {'wall sd':>8} {'user s':>8} {'sys s':>8} "
          f"{'CPU %':>6} {'invol sw':>9} {'vol sw':>8} {'fairness':>8}")
    cells = {}
    for r in rows:
        if r["workload"] == workload:
            cells.setdefault((r["policy"], r["procs"]), []).append(r)
    for (policy, procs), rs in cells.items():
        ok = [r for r in rs if r["status"] == "ok"]
        if not ok:
            print(f"{policy:8} {procs:>5} {0:>2}/{len(rs):<2}")
            continue
        m = lambda k: st.mean(r[k] for r in ok)
        walls = [r["wall_s"] for r in ok]
        sd = st.stdev(walls) if len(walls) > 1 else 0.0
        print(f"{policy:8} {procs:>5} {len(ok):>2}/{len(rs):<2} {st.median(walls):10.3f} {sd:8.3f} {m('user_s'):8.3f} "
              f"{m('sys_s'):8.3f} {m('cpu_pct'):6.0f} {m('nivcsw'):9.0f} {m('nvcsw'):8.0f} {m('fairness'):8.3f}")
    print()
PY

echo
echo "== classic findings"
python3 - "$json" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in rows if r["status"] == "ok"]
def med(workload, policy, procs, key):
    v = [r[key] for r in ok if r["workload"] == workload and r["policy"] == policy and r["procs"] == procs]
    return st.median(v) if v else float("nan")
for procs in sorted({r["procs"] for r in ok}):
    other = med("cpu", "other", procs, "nivcsw")
    rt = st.mean([med("cpu", "fifo", procs, "nivcsw"), med("cpu", "rr", procs, "nivcsw")])
    ratio = other / rt if rt else float("inf")
    print(f"cpu   procs={procs:<4} involuntary switches: OTHER {other:.0f}, FIFO/RR mean {rt:.1f} -> OTHER/RT = {ratio:.1f}x")
    for w in ("io", "mixed"):
        o = med(w, "other", procs, "wall_s")
        f = med(w, "fifo", procs, "wall_s")
        r = med(w, "rr", procs, "wall_s")
        print(f"{w:5} procs={procs:<4} median wall: OTHER {o:.3f} s, FIFO {f:.3f} s ({f/o:.2f}x), RR {r:.3f} s ({r/o:.2f}x)")
failed = len(rows) - len(ok)
print(f"trials: {len(rows)}, not ok: {failed}")
PY
