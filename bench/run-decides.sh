#!/usr/bin/env bash
# Does the main job answer its questions? ROUNDS runs of `schedlab run SUITE` (default the
# quick suite), each into a fresh database: wall seconds and questions answered (a lead or
# equivalence, as the run's findings say), then the medians.
#
#   bench/run-decides.sh [ROUNDS] [SUITE]     (defaults 5 and quick; needs root for FIFO)
#   KEEP=DIR bench/run-decides.sh ...          also keeps each run's database in DIR
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
suite=${2:-quick}
nice -n 19 cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/schedlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "run  wall s  answered  open questions"
for ((i = 1; i <= rounds; i++)); do
  db=$work/r$i.db
  start=$(date +%s.%N)
  flock /tmp/schedlab-measure.lock "$bin" run "$suite" --db "$db" >/dev/null 2>&1 || true
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  "$bin" report latest --db "$db" --format json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
q = doc["questions"]
def open_of(f):
    a = f.get("answer") or f.get("p99_answer")
    if a is not None and a["verdict"] not in ("leads", "equivalent"):
        return f["what"]
    if f["kind"] == "scaling" and f["shape"] == "unclear":
        return f["what"]
opened = [w for w in map(open_of, doc["findings"]) if w]
print("%3d  %6.1f  %2d of %2d  %s" % (int(sys.argv[1]), float(sys.argv[2]), q["answered"], q["asked"], "; ".join(opened)))' "$i" "$wall"
  if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$db" "$KEEP/r$i.db"; fi
done | tee "$work/rows"
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
walls = [float(r[1]) for r in rows]
shares = [int(r[2]) / int(r[4]) for r in rows]
print(f"median wall {statistics.median(walls):.1f} s (max {max(walls):.1f}); median share answered {statistics.median(shares):.0%} (min {min(shares):.0%})")
PY
