#!/usr/bin/env bash
# Trial length by measurement: which trial length answers a question (OTHER vs FIFO) for the
# least time on this machine? For each workload kind and latency, at three trial lengths,
# BLOCKS paired blocks (one OTHER and one FIFO trial back to back, random order) are run by
# `schedlab run`; the within-block log ratios d = ln(FIFO / OTHER) give
#   var·s   the variance of d times the seconds a block takes: the variance per second of
#           budget (lower decides faster);
#   ~blocks the blocks schedlab's sign-test confidence sequences need to decide at α = 0.05
#           over a family of 16 claims, if the blocks go on as measured: a difference by
#           the share on one side of 0, equivalence by the share inside ±5 %; whichever is
#           fewer (inf: more than 400);
#   ~s      those blocks times the block's seconds.
# The length with the fewest ~s is the quick suite's default (docs/questions.md, "Trial length").
#
#   bench/trial-length.sh [BLOCKS]     (default 10; needs root for FIFO)
#
# The lengths tried, each a space-separated list (empty: skip that kind), and the process
# counts, may be set: TL_CPU (iterations), TL_IO (transfer sizes), TL_MIXED (iterations),
# TL_LOOPS (latency, at TL_INTERVAL, default 500us) and TL_PROCS (empty or unset: 2 8), e.g.
# `TL_CPU= TL_LOOPS= TL_MIXED="150 300 600" TL_IO="100KiB 400KiB" TL_PROCS=8`.
set -euo pipefail
cd "$(dirname "$0")/.."
blocks=${1:-10}
read -ra counts <<<"${TL_PROCS:-2 8}"
procs=$(IFS=,; echo "${counts[*]}")
nice -n 19 cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

suite=$work/lengths.toml
{
  echo 'name = "trial-length"'
  for it in ${TL_CPU-10_000_000 40_000_000 160_000_000}; do
    printf '[[experiment]]\nfamily = "workload"\nworkload = "cpu"\npolicy = ["other", "fifo"]\nprocs = [%s]\niterations = %s\nrepeat = %s\n' "$procs" "$it" "$blocks"
  done
  for size in ${TL_IO-400KiB 1600KiB 6400KiB}; do
    printf '[[experiment]]\nfamily = "workload"\nworkload = "io"\npolicy = ["other", "fifo"]\nprocs = [%s]\ntransfer_size = "%s"\nrepeat = %s\n' "$procs" "$size" "$blocks"
  done
  for it in ${TL_MIXED-600 2400 9600}; do
    printf '[[experiment]]\nfamily = "workload"\nworkload = "mixed"\npolicy = ["other", "fifo"]\nprocs = [%s]\niterations = %s\nrepeat = %s\n' "$procs" "$it" "$blocks"
  done
  for loops in ${TL_LOOPS-400 1500 6000}; do
    printf '[[experiment]]\nfamily = "latency"\npolicy = ["other", "fifo"]\ninterval = "%s"\nloops = %s\nrepeat = %s\n' "${TL_INTERVAL:-500us}" "$loops" "$blocks"
  done
} >"$suite"

flock /tmp/schedlab-measure.lock "$bin" run "$suite" --db "$work/t.db" >/dev/null 2>"$work/log" || { cat "$work/log"; exit 1; }
"$bin" export latest --db "$work/t.db" --format json >"$work/t.json"

python3 - "$work/t.json" <<'EOF'
import json, math, statistics, sys
from collections import defaultdict
run = json.load(open(sys.argv[1]))["runs"][0]
cells = defaultdict(dict)
for t in run["trials"]:
    if t["status"] != "ok":
        continue
    p, f = t["params"], t["figures"]
    figure = f.get("wall_s") if t["family"] == "workload" else f.get("p99_ns")
    kind = p.get("workload", "latency")
    length = p.get("iterations") or p.get("transfer_size") or p.get("loops")
    key = (t["experiment"], kind, p.get("procs", "-"), length)
    cells[key].setdefault(t["repeat"], {})[p["policy"]] = (figure, t["elapsed_s"])

def sign_e(k, n):
    # schedlab's sign martingale (analysis::sequential::sign_e): sum_{j<=k} C(n+1, j) / ((n+1) C(n, k)).
    return sum(math.comb(n + 1, j) for j in range(k + 1)) / ((n + 1) * math.comb(n, k))

def blocks_needed(share, bar):
    """Blocks until a sequence with this share of hits reaches the bar (inf if never by 400)."""
    for n in range(1, 401):
        if sign_e(round(share * n), n) >= bar:
            return n
    return math.inf

print(f"{'kind':8} {'procs':>5} {'length':>12} {'n':>3} {'block s':>8} {'mean d':>7} {'sd d':>6} {'var·s':>8} {'~blocks':>8} {'~s':>7}")
best = {}
for key in sorted(cells):
    _, kind, procs, length = key
    pairs = [b for b in cells[key].values() if "other" in b and "fifo" in b]
    d = [math.log(b["fifo"][0] / b["other"][0]) for b in pairs if b["fifo"][0] > 0 and b["other"][0] > 0]
    if len(d) < 3:
        continue
    block_s = statistics.median(b["fifo"][1] + b["other"][1] for b in pairs)
    sd = statistics.stdev(d)
    up = sum(x > 0 for x in d) / len(d)
    inside = min(sum(x > math.log(0.95) for x in d), sum(x < math.log(1.05) for x in d)) / len(d)
    # A lead at 0.05 / 16 two-sided (the sign count), equivalence at 0.05 / 16 on each bound.
    need = min(blocks_needed(max(up, 1 - up), 640), blocks_needed(inside, 320))
    secs = need * block_s
    print(f"{kind:8} {procs:>5} {str(length):>12} {len(d):>3} {block_s:8.3f} {statistics.mean(d):+7.3f} {sd:6.3f} {sd*sd*block_s:8.5f} {need:>8} {secs:7.0f}")
    k = (kind, procs)
    if k not in best or secs < best[k][1]:
        best[k] = (length, secs)
print()
for (kind, procs), (length, secs) in sorted(best.items(), key=str):
    print(f"fastest to decide: {kind} procs={procs}: length {length} (~{secs:.0f} s)")
EOF
