#!/usr/bin/env bash
# A/A: `schedlab ab` with two identical sides (`true` setups) on bench/ab-mixed.toml (a
# ring, a CPU workload and timer latency, 8 blocks a side), ROUNDS times. Nothing differs
# between A and B, so every regression verdict (exit 1) is a false alarm. Prints each
# round's exit status, verdicts and wall time, then how many rounds exited 1 (aim: none;
# at most 1 of 5). Exits 1 if more than one did.
#
#   bench/ab-aa.sh [ROUNDS]      (default 5)
#   SCHEDLAB=/path/to/schedlab bench/ab-aa.sh   (default: cargo build --release)
#
# Wrap it in `flock /tmp/schedlab-measure.lock` where other measurements may run.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")
work=$(mktemp -d -t schedlab-ab-aa.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== A/A: $rounds x schedlab ab bench/ab-mixed.toml --a-setup true --b-setup true ($bin)"
ones=0
for ((i = 1; i <= rounds; i++)); do
  rc=0
  t0=$(date +%s.%N)
  "$bin" ab bench/ab-mixed.toml --a-setup true --b-setup true --db "$work/aa.db" --format json \
    >"$work/round-$i.json" 2>"$work/round-$i.log" || rc=$?
  t1=$(date +%s.%N)
  if ((rc != 0 && rc != 1)); then
    echo "round $i: schedlab ab exited $rc:"
    tail -5 "$work/round-$i.log"
    exit 2
  fi
  ((rc == 1)) && ones=$((ones + 1))
  python3 - "$work/round-$i.json" "$i" "$rc" "$t0" "$t1" <<'PY'
import collections, json, sys
rows = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if "verdict" in r]
verdicts = collections.Counter(r["verdict"] for r in rows)
flagged = [f"{r['family']} {r['figure']} x{r['ratio']:.3f} (p Holm {r['p_adjusted']:.4f})" for r in rows if r["regression"]]
print(f"round {sys.argv[2]}: exit {sys.argv[3]}, {float(sys.argv[5]) - float(sys.argv[4]):.0f} s, mode {rows[0]['mode']}; "
      + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
      + (f"; REGRESSION: {'; '.join(flagged)}" if flagged else ""))
PY
done
echo "A/A: $ones of $rounds exited 1 (aim: 0; at most 1)"
((ones <= 1))
