#!/usr/bin/env bash
# The noise floor, checked both ways on this machine:
# - A/A: PAIRS pairs of quiet runs of one small suite, each pair compared: their floors
#   should be called alike (a "differ" here is a false alarm);
# - a hog: one quiet run, then one beside a busy loop pinned to the last CPU (nice 0, as
#   any neighbour's job): compare must say the floors differ.
# Prints each run's floor and what compare said.
#
#   bench/noise-floor.sh [PAIRS]     (default 3)
#   SCHEDLAB=/path/to/schedlab bench/noise-floor.sh   (default: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")
work=$(mktemp -d -t schedlab-noise-floor.XXXXXX)
hog=
cleanup() {
  [[ -n $hog ]] && kill "$hog" 2>/dev/null && wait "$hog" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
last=$(($(nproc) - 1))
# A ring on CPU 0 and an unpinned workload: the probe measures on every CPU.
cat >"$work/suite.toml" <<TOML
name = "floor"
[[experiment]]
family = "ring"
procs = 2
laps = 2000
cpus = "0"
pin = "same"
repeat = 2
[[experiment]]
family = "workload"
workload = "cpu"
procs = 2
iterations = 200000
repeat = 2
TOML

floor_of() { grep -m1 '^schedlab: noise floor:' "$1" | sed 's/^schedlab: noise floor: //'; }
run() { # run DB LOG
  "$bin" run "$work/suite.toml" --db "$1" >"$2" 2>&1 || { echo "schedlab run failed:"; tail -5 "$2"; exit 2; }
}
verdict() { # verdict DB
  local out
  out=$("$bin" compare 1 2 --db "$1" 2>/dev/null || true)
  if grep -q 'the floors differ' <<<"$out"; then
    echo "differ: $(grep -A3 'the floors differ' <<<"$out" | grep '^  - ' | sed 's/^  - //' | paste -sd'|' -)"
  elif grep -q 'the floors agree' <<<"$out"; then
    echo "alike"
  else
    echo "no verdict"
  fi
}

echo "== A/A: $pairs pairs of quiet runs ($bin)"
false_alarms=0
for ((p = 1; p <= pairs; p++)); do
  run "$work/aa-$p.db" "$work/aa-$p-1.log"
  run "$work/aa-$p.db" "$work/aa-$p-2.log"
  v=$(verdict "$work/aa-$p.db")
  [[ $v == differ* ]] && false_alarms=$((false_alarms + 1))
  echo "pair $p: $v"
  echo "    1: $(floor_of "$work/aa-$p-1.log")"
  echo "    2: $(floor_of "$work/aa-$p-2.log")"
done
echo "A/A: the floors were called different in $false_alarms of $pairs pairs"

echo "== quiet, then beside a busy loop on CPU $last"
run "$work/hog.db" "$work/quiet.log"
taskset -c "$last" sh -c 'while :; do :; done' &
hog=$!
sleep 0.2
run "$work/hog.db" "$work/loud.log"
kill "$hog"; wait "$hog" 2>/dev/null || true; hog=
echo "quiet:      $(floor_of "$work/quiet.log")"
echo "beside hog: $(floor_of "$work/loud.log")"
echo "compare: $(verdict "$work/hog.db")"
