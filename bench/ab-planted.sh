#!/usr/bin/env bash
# Planted regression: `schedlab ab` on bench/ab-mixed.toml where the B side's setup starts
# a CPU hog (a busy shell loop) on CPU 1, the CPU the suite's ring and latency thread are
# pinned to, and its cleanup stops it; A's setup does nothing. Each of ROUNDS sessions must
# find the regression (exit 1), and no hog may outlive its block: prints each round's exit
# status and the figures flagged, how many rounds detected it, and how many hogs survived.
# Exits 1 unless every round detected it and none survived.
#
#   bench/ab-planted.sh [ROUNDS]      (default 5)
#   SCHEDLAB=/path/to/schedlab bench/ab-planted.sh   (default: cargo build --release)
#
# Wrap it in `flock /tmp/schedlab-measure.lock` where other measurements may run.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
if (($(getconf _NPROCESSORS_ONLN) < 2)); then
  echo "needs 2 CPUs or more: the suite and the hog use CPU 1" >&2
  exit 2
fi
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")
work=$(mktemp -d -t schedlab-ab-planted.XXXXXX)
# Every hog pid any setup started, to check afterwards (and to stop, should one survive).
hogs=$work/hogs
: >"$hogs"
alive() { # the hogs still running
  local pid
  while read -r pid; do
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && grep -q 'while' "/proc/$pid/cmdline" 2>/dev/null; then
      echo "$pid"
    fi
  done <"$hogs"
}
finish() {
  local left
  left=$(alive)
  if [[ -n $left ]]; then
    kill $left 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

setup="taskset -c 1 sh -c 'while :; do :; done' & echo \$! > $work/hog.pid; echo \$! >> $hogs"
cleanup="kill \$(cat $work/hog.pid) && rm $work/hog.pid"
echo "== planted: $rounds x schedlab ab bench/ab-mixed.toml, B with a busy loop on CPU 1 ($bin)"
detected=0
for ((i = 1; i <= rounds; i++)); do
  rc=0
  "$bin" ab bench/ab-mixed.toml --a-setup true --b-setup "$setup" --b-cleanup "$cleanup" --db "$work/planted.db" \
    --format json >"$work/round-$i.json" 2>"$work/round-$i.log" || rc=$?
  if ((rc != 0 && rc != 1)); then
    echo "round $i: schedlab ab exited $rc:"
    tail -5 "$work/round-$i.log"
    exit 2
  fi
  ((rc == 1)) && detected=$((detected + 1))
  python3 - "$work/round-$i.json" "$i" "$rc" <<'PY'
import json, sys
rows = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if "verdict" in r]
flagged = [f"{r['family']} {r['figure']} x{r['ratio']:.2f} [{r['ci_low']:.2f}..{r['ci_high']:.2f}]" for r in rows if r["regression"]]
print(f"round {sys.argv[2]}: exit {sys.argv[3]}; REGRESSION in {len(flagged)} of {len(rows)} figures: {'; '.join(flagged) or '-'}")
PY
done
started=$(grep -c . "$hogs" || true)
survivors=$(alive | grep -c . || true)
echo "planted: detected $detected of $rounds; hogs started $started, still running $survivors"
((detected == rounds && survivors == 0))
