#!/usr/bin/env bash
# Does `schedlab trend` find a planted shift in a short history, and leave a quiet one be?
#
#   bench/trend-planted.sh [PLANTED] [QUIET] [RUNS]     (default 3 3 8)
#   SCHEDLAB=/path/to/schedlab bench/trend-planted.sh   (default: cargo build --release)
#
# Each history is RUNS real runs of a small suite (a 2-member ring pinned to the last CPU,
# 4 repeats of 100 ms, no noise probe) into a fresh database. In the PLANTED histories a
# busy loop runs on every CPU from run RUNS/2 + 1 on (a doubled cost or more for the ring);
# the QUIET ones run beside nothing of ours. Then `trend --format json` is asked, and this
# prints each history's run medians and change points, how many planted histories have one
# at run RUNS/2 + 1 in the 2-member ring's series, and how many quiet ones have any at all.
set -euo pipefail
cd "$(dirname "$0")/.."
planted=${1:-3}
quiet=${2:-3}
runs=${3:-8}
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")
work=$(mktemp -d -t schedlab-trend-planted.XXXXXX)
hogs=()
stop_hogs() {
  if ((${#hogs[@]})); then
    kill "${hogs[@]}" 2>/dev/null || true
    wait "${hogs[@]}" 2>/dev/null || true
  fi
  hogs=()
}
cleanup() {
  stop_hogs
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
last=$(($(nproc) - 1))
shift_at=$((runs / 2 + 1))

cat >"$work/suite.toml" <<TOML
name = "planted"
[[experiment]]
family = "ring"
procs = 2
duration = "100ms"
pin = "same"
cpus = "$last"
repeat = 4
warmup = 0
TOML

history() { # history DB HOGGED
  local i
  for ((i = 1; i <= runs; i++)); do
    if [[ $2 == yes && $i -eq $shift_at ]]; then
      for ((c = 0; c <= last; c++)); do
        taskset -c "$c" sh -c 'while :; do :; done' &
        hogs+=($!)
      done
      sleep 0.2
    fi
    "$bin" run "$work/suite.toml" --noise-probe off --db "$1" >"$work/run.log" 2>&1 ||
      { echo "schedlab run failed:"; tail -5 "$work/run.log"; exit 2; }
  done
  stop_hogs
  # Exit 1 is a newest-run regression, not a failure.
  "$bin" trend --db "$1" --format json >"$1.json" || [[ $? -eq 1 ]]
}

# One line per history; the last word is 1 when it counts (planted: a change point at
# shift_at; quiet: any change point).
verdict() { # verdict JSON KIND
  python3 - "$1" "$2" "$shift_at" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
kind, shift_at = sys.argv[2], int(sys.argv[3])
[s] = [s for s in doc["series"] if s["family"] == "ring" and s["params"].get("procs") == 2]
points = " ".join(f"{p['value']:.0f}" for p in s["points"])
cps = s["change_points"]
said = ", ".join(
    f"run {c['run']} {c['change'] * 100:+.0f}% (p {c['p']:.1e} < {c['alpha']})" for c in cps) or "none"
hit = any(c["run"] == shift_at for c in cps) if kind == "planted" else bool(cps)
print(f"ns/switch {points}; change points: {said}; {int(hit)}")
PY
}

# COUNT histories of KIND (planted or quiet; HOG yes or no): a line each; their hits in $tally.
histories() {
  local kind=$1 count=$2 hog=$3 h v
  tally=0
  for ((h = 1; h <= count; h++)); do
    history "$work/$kind-$h.db" "$hog"
    v=$(verdict "$work/$kind-$h.db.json" "$kind")
    echo "$kind $h: ${v%; *}"
    tally=$((tally + ${v##*; }))
  done
}
histories planted "$planted" yes
found=$tally
histories quiet "$quiet" no
alarms=$tally
echo "planted (a busy loop on each of $((last + 1)) CPUs from run $shift_at of $runs): a change point at run $shift_at in $found of $planted"
echo "quiet ($runs runs): any change point in $alarms of $quiet"
