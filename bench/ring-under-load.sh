#!/usr/bin/env bash
# Short rings on a busy machine: one `nice -n 19` busy loop per online CPU runs while a
# suite of 200 short ring trials (2, 4, 8 and 16 processes x 500 laps x pin none and
# same x 25 repeats) runs. Every trial should still finish: prints trials planned, ok and
# not ok, the reasons of those not ok grouped, not-ok counts per ring, and the wall time.
# Exits 1 if any trial is not ok.
#
#   bench/ring-under-load.sh [REPEAT]      (default 25: 4 x 2 x 25 = 200 trials)
#   LOAD_NICE=0 bench/ring-under-load.sh   (the busy loops' nice value; default 19)
#   SCHEDLAB=/path/to/schedlab bench/ring-under-load.sh   (default: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-25}
load_nice=${LOAD_NICE:-19}
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")

work=$(mktemp -d -t schedlab-ring-under-load.XXXXXX)
hogs=()
cleanup() {
  if ((${#hogs[@]})); then
    kill "${hogs[@]}" 2>/dev/null || true
    wait "${hogs[@]}" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cat >"$work/ring-under-load.toml" <<TOML
name = "ring-under-load"
description = "short rings while every CPU runs a nice 19 busy loop, for bench/ring-under-load.sh"

[[experiment]]
family = "ring"
procs = [2, 4, 8, 16]
laps = 500
pin = ["none", "same"]
repeat = $repeat
TOML

cpus=$(getconf _NPROCESSORS_ONLN)
for ((i = 0; i < cpus; i++)); do
  nice -n "$load_nice" sh -c 'while :; do :; done' &
  hogs+=("$!")
done
echo "== $((4 * 2 * repeat)) ring trials under $cpus nice-$load_nice busy loop(s) ($bin)"

t0=$(date +%s.%N)
rc=0
"$bin" run "$work/ring-under-load.toml" --db "$work/load.db" >"$work/run.log" 2>&1 || rc=$?
t1=$(date +%s.%N)
kill "${hogs[@]}" 2>/dev/null || true
wait "${hogs[@]}" 2>/dev/null || true
hogs=()
if ((rc != 0 && rc != 3)); then # 3: finished, some trials not ok
  echo "schedlab run exited $rc:"
  tail -5 "$work/run.log"
  exit 1
fi

"$bin" export 1 --db "$work/load.db" -o "$work/load.json"
python3 - "$work/load.json" "$t0" "$t1" <<'PY'
import collections, json, re, sys
run = json.load(open(sys.argv[1]))["runs"][0]
trials = run["trials"]
bad = [t for t in trials if t["status"] != "ok"]
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"wall: {wall:.1f} s; run status: {run['status']}")
print(f"trials: planned {run['planned']}, stored {len(trials)}, ok {len(trials) - len(bad)}, not ok {len(bad)}")
if bad:
    print("not ok by ring (procs/pin):")
    cells = collections.Counter((t["params"]["procs"], t["params"].get("pin", "none")) for t in bad)
    for (procs, pin), n in sorted(cells.items()):
        print(f"  {procs:>3} {pin:5} {n:>4}")
    print("reasons (numbers as N):")
    why = collections.Counter(f"{t['status']}: {re.sub(r'[0-9]+', 'N', t['reason'] or '')}" for t in bad)
    for reason, n in why.most_common():
        print(f"  {n:>4}  {reason}")
sys.exit(1 if bad or len(trials) != run["planned"] else 0)
PY
