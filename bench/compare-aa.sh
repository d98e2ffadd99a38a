#!/usr/bin/env bash
# Separate-run A/A: RUNS plain `schedlab run`s of one suite, one after the other with
# nothing changed, then `schedlab compare` of every ordered pair of them. Every regression
# verdict (exit 1) is a false alarm: drift between runs read as a change. Each pair is
# compared twice: in the database of all the runs (the others are its history: their
# spread widens the drift band) and in a copy holding only the two (the band then comes
# from the runs' own halves alone). Prints each comparison's exit statuses and verdict
# counts, and how many comparisons exited 1 each way.
#
#   bench/compare-aa.sh [RUNS] [SUITE]    (default 4 runs of bench/ab-mixed.toml; try quick)
#   SCHEDLAB=/path/to/schedlab bench/compare-aa.sh   (default: cargo build --release)
#
# Wrap it in `flock /tmp/schedlab-measure.lock` where other measurements may run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-4}
suite=${2:-bench/ab-mixed.toml}
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")
work=$(mktemp -d -t schedlab-compare-aa.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== $runs separate runs of $suite, every ordered pair compared ($bin)"
for ((i = 1; i <= runs; i++)); do
  rc=0
  "$bin" run "$suite" --db "$work/aa.db" >"$work/run-$i.log" 2>&1 || rc=$?
  if ((rc != 0 && rc != 3)); then
    echo "run $i: schedlab run exited $rc:"
    tail -5 "$work/run-$i.log"
    exit 2
  fi
done
ones=0
alone_ones=0
total=0
for ((a = 1; a <= runs; a++)); do
  for ((b = 1; b <= runs; b++)); do
    ((a == b)) && continue
    rc=0
    "$bin" compare "$a" "$b" --db "$work/aa.db" --format json >"$work/cmp.json" || rc=$?
    ((rc == 1)) && ones=$((ones + 1))
    total=$((total + 1))
    # The same pair in a database of its own: no history.
    "$bin" export "$a" "$b" --db "$work/aa.db" -o "$work/pair.json"
    rm -f "$work/pair.db"
    "$bin" import "$work/pair.json" --db "$work/pair.db" 2>/dev/null
    alone=0
    "$bin" compare 1 2 --db "$work/pair.db" --format json >"$work/alone.json" || alone=$?
    ((alone == 1)) && alone_ones=$((alone_ones + 1))
    python3 - "$work/cmp.json" "$a" "$b" "$rc" "$alone" <<'PY'
import collections, json, sys
rows = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if "verdict" in r]
verdicts = collections.Counter(r["verdict"] for r in rows)
print(f"compare {sys.argv[2]} {sys.argv[3]}: exit {sys.argv[4]} (alone: {sys.argv[5]}); "
      + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
PY
  done
done
echo "separate-run A/A: $ones of $total comparisons exited 1 (REGRESSION) beside the other runs; $alone_ones of $total with the two runs alone"
