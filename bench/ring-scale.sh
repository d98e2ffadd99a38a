#!/usr/bin/env bash
# Large rings: do they complete, what does a hop cost, and how much memory does each
# member take? For each size the ring runs for 12 s while the script sums the
# proportional set size (Pss, /proc/PID/smaps_rollup) and page tables (VmPTE) of
# schedlab and every member. Kernel stacks and pipe buffers are not in it.
#
#   bench/ring-scale.sh [SIZES] [MODE]       (defaults: "100 1000 4096", process)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-"100 1000 4096"}
mode=${2:-process}
cargo build --release --quiet
bin=target/release/schedlab
out=$(mktemp)
trap 'rm -f "$out"' EXIT

pss_of_tree() { # total Pss plus page tables (KiB) of $1 and its children, read in one pass
  python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
pids = [root]
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            stat = open(f"/proc/{p}/stat").read()
            if stat[stat.rindex(")") + 2:].split()[1] == root:
                pids.append(p)
        except OSError:
            pass
total = 0
for p in pids:
    try:
        for path, key in ((f"/proc/{p}/smaps_rollup", "Pss:"), (f"/proc/{p}/status", "VmPTE:")):
            for line in open(path):
                if line.startswith(key):
                    total += int(line.split()[1])
    except OSError:
        pass
print(total)
PY
}

printf '%-8s %-8s %12s %12s %14s %10s\n' procs mode ns_per_hop mem_MiB KiB_per_member spawn_ms
for n in $sizes; do
  "$bin" ring --procs "$n" --mode "$mode" --duration 12s --json >"$out" &
  pid=$!
  sleep 5
  pss=$(pss_of_tree "$pid")
  wait "$pid"
  python3 - "$n" "$mode" "$pss" "$out" <<'PY'
import json, sys
n, mode, kb, path = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
r = json.loads(open(path).readline())
print(f"{n:<8} {mode:<8} {r['ns_per_hop']:12.0f} {kb / 1024:12.1f} {kb / n:14.1f} {r['spawn_s'] * 1e3:10.1f}")
PY
done
