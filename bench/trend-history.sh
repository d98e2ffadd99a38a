#!/usr/bin/env bash
# `schedlab trend` over a long history: how long it takes on 1,000 stored runs, and what
# it finds there.
#
#   bench/trend-history.sh [RUNS] [REAL]   (default 1000 runs built from 20 real ones)
#
# REAL runs of a small suite (a pinned 2- and 8-process ring, one CPU-bound workload cell)
# are measured here; the last quarter of them beside three busy loops on the ring's CPU, a
# planted shift. Their JSON export is then cycled, with fresh UUIDs and start times, into
# RUNS runs: the first 70 % from the plain runs, the rest from the planted ones, and
# imported. Every figure in the database was measured on this machine; the long history
# is the short one cycled, with one shift, at run 0.7 x RUNS + 1.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000}
real=${2:-20}
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/schedlab
work=$(mktemp -d)
hogs=()
stop_hogs() { ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null; wait "${hogs[@]}" 2>/dev/null; hogs=(); }
cleanup() { stop_hogs || true; rm -rf "$work"; }
trap cleanup EXIT
cpu=$(( $(nproc) - 1 ))

cat > "$work/history.toml" <<TOML
name = "history"
[[experiment]]
family = "ring"
procs = [2, 8]
duration = "50ms"
pin = "same"
cpus = "$cpu"
repeat = 3
warmup = 0
[[experiment]]
family = "workload"
workload = "cpu"
procs = 2
iterations = 2_000_000
repeat = 3
TOML

planted=$(( real * 3 / 4 ))
echo "== $real real runs (from run $((planted + 1)) on, three busy loops on CPU $cpu)"
for i in $(seq 1 "$real"); do
  if [ "$i" -eq $((planted + 1)) ]; then
    for _ in 1 2 3; do taskset -c "$cpu" sh -c 'while :; do :; done' & hogs+=($!); done
  fi
  "$bin" run "$work/history.toml" --db "$work/real.db" > /dev/null 2>&1
done
stop_hogs || true
"$bin" trend --db "$work/real.db" | sed -n '1,12p'

echo "== $runs runs: the $real cycled"
"$bin" export $(seq 1 "$real") --format json --db "$work/real.db" > "$work/real.json"
python3 - "$work/real.json" "$work/long.json" "$runs" "$planted" <<'PY'
import json, sys, uuid, datetime
src, dst, n, planted = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
doc = json.load(open(src))
runs = sorted(doc["runs"], key=lambda r: r["started"])
plain, hogged = runs[:planted], runs[planted:]
out = dict(doc); out["runs"] = []
start = datetime.datetime(2026, 1, 1)
shift_at = int(n * 0.7)
for i in range(n):
    pool, k = (plain, i) if i < shift_at else (hogged, i - shift_at)
    r = json.loads(json.dumps(pool[k % len(pool)]))
    r["uuid"] = str(uuid.uuid4())
    r["started"] = (start + datetime.timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    out["runs"].append(r)
json.dump(out, open(dst, "w"))
PY
"$bin" import "$work/long.json" --db "$work/long.db" > /dev/null 2>&1
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; t1=$(date +%s.%N); python3 -c "print(f'{$t1 - $t0:.2f}')"; }
echo "runs stored: $("$bin" list --db "$work/long.db" | tail -n +2 | wc -l)"
echo "trend (table):       $(seconds "$bin" trend --db "$work/long.db") s"
echo "trend --format json: $(seconds "$bin" trend --db "$work/long.db" --format json) s"
echo "trend --html:        $(seconds "$bin" trend --db "$work/long.db" --html "$work/t.html") s"
"$bin" trend --db "$work/long.db" --format json > "$work/long-trend.json" || true
python3 - "$work/long-trend.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for s in doc["series"]:
    cps = s["change_points"]
    params = " ".join(f"{k}={v}" for k, v in s["params"].items())
    found = ", ".join(f"run {c['index'] + 1} ({c['change'] * 100:+.0f}%, p {c['p']:.1e})" for c in cps[:4])
    print(f"{s['family']} {params} {s['figure']}: {len(s['points'])} points, {len(cps)} change points" + (f": {found}" if cps else ""))
PY
echo "(planted: one shift, at run $(( runs * 7 / 10 + 1 )), in the ring cells; the workload cell runs on any CPU)"
