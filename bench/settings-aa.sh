#!/usr/bin/env bash
# A/A with typed sides: `schedlab ab` whose two sides switch the same sysctl to the same
# value (`--a-set`/`--b-set 'sysctl.kernel.sched_rt_runtime_us = 950000'`, the default
# here), ROUNDS times, on a short suite (timer latency and a 2-child CPU workload, 12
# blocks a side, about 20 s a session on 2 vCPUs: with 6 figures tested, Holm's first step
# needs 11 paired blocks, so fewer could never raise a false alarm and prove nothing). Each block switches its side's value,
# reads it back and restores it, so this checks that the switching itself adds nothing a
# comparison could mistake for a difference: every exit 1 is a false alarm. Prints each
# round's exit status and verdicts, then how many rounds exited 1 (aim: at most 1 of 20),
# and checks the sysctl is as it was. Exits 1 if more than ROUNDS/20 rounds exited 1.
#
#   bench/settings-aa.sh [ROUNDS]    (default 20; SYSCTL=name VALUE=v picks the setting)
#   SCHEDLAB=/path/to/schedlab bench/settings-aa.sh   (default: cargo build --release)
# Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
name=${SYSCTL:-kernel.sched_rt_runtime_us}
value=${VALUE:-$(cat "/proc/sys/${name//.//}")}
if [[ -z ${SCHEDLAB:-} ]]; then
  cargo build --release --quiet
  SCHEDLAB=${CARGO_TARGET_DIR:-target}/release/schedlab
fi
bin=$(realpath "$(command -v "$SCHEDLAB")")
work=$(mktemp -d -t schedlab-settings-aa.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
before=$(cat "/proc/sys/${name//.//}")
cat >"$work/suite.toml" <<'TOML'
name = "settings-aa"
[[experiment]]
family = "latency"
interval = "1ms"
loops = 300
repeat = 12

[[experiment]]
family = "workload"
workload = "cpu"
procs = 2
iterations = 5_000_000
repeat = 12
TOML

echo "== A/A: $rounds x schedlab ab --a-set/--b-set 'sysctl.$name = $value' ($bin)"
ones=0
for ((i = 1; i <= rounds; i++)); do
  rc=0
  "$bin" ab "$work/suite.toml" --a-set "sysctl.$name = $value" --b-set "sysctl.$name = $value" \
    --noise-probe off --db "$work/aa.db" --format json >"$work/round-$i.json" 2>"$work/round-$i.log" || rc=$?
  if ((rc != 0 && rc != 1)); then
    echo "round $i: schedlab ab exited $rc:"
    tail -5 "$work/round-$i.log"
    exit 2
  fi
  ((rc == 1)) && ones=$((ones + 1))
  python3 - "$work/round-$i.json" "$i" "$rc" <<'PY'
import collections, json, sys
rows = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if "verdict" in r]
verdicts = collections.Counter(r["verdict"] for r in rows)
flagged = [f"{r['family']} {r['figure']} x{r['ratio']:.3f}" for r in rows if r["regression"]]
print(f"round {sys.argv[2]}: exit {sys.argv[3]}; " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
      + (f"; REGRESSION: {'; '.join(flagged)}" if flagged else ""))
PY
done
after=$(cat "/proc/sys/${name//.//}")
echo "A/A: $ones of $rounds exited 1 (aim: at most $((rounds / 20))); $name $before before, $after after"
[[ $before == "$after" ]] && ((ones <= rounds / 20))
